import Foundation
import PanesCore
import PanesJSON
import PanesSecurityTestSupport
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Failed authentications limited per peer address, over real sockets (issue 26, item 5): a
/// flood of RS256 tokens with random signatures from one address is refused unchecked past
/// `authFailureBurst` (new connections with HTTP 429 before their handshake, an open one with
/// `rate_limited` and close 4012), while a client from another address connects as before;
/// behind a trusted proxy the forwarded client address counts.
@Suite struct AuthLimitEndToEndTests {
    static let settings: JSONValue = ["authFailureBurst": 5, "authFailuresPerMinute": 6]

    static func server(settings: JSONValue = settings, extra: [String] = []) throws -> ServerProcess {
        let keys = ServerProcess.tempFolder()
        let file = keys.appendingPathComponent("jwt-keys.json")
        try Data(JSONCodec.encode(TokenSigner.keyFile([
            ["kid": "rs-1", "alg": "RS256", "publicKey": .string(TestKeys.rsa.publicPEM)],
        ]))).write(to: file)
        return try ServerProcess(config: ["settings": settings], extra: ["--auth", "jwt", "--jwt-keys", file.path] + extra)
    }

    static var now: Millis { Millis(Date().timeIntervalSince1970 * 1000) }

    static func good(_ user: String = "alice") -> String {
        TokenSigner.sign(TokenSigner.claims(now: now, user: user, workspaces: ["team": "editor"]), algorithm: "RS256",
                         key: TestKeys.rsa.privatePEM, kid: "rs-1")
    }

    /// What a flood sends: a well-formed RS256 token whose signature is 256 random bytes.
    static func forged() -> String {
        TokenSigner.assemble(header: ["alg": "RS256", "typ": "JWT", "kid": "rs-1"],
                             claims: TokenSigner.claims(now: now, user: "mallory", workspaces: ["team": "owner"]),
                             signature: (0..<256).map { _ in UInt8.random(in: 0...255) })
    }

    static func client(_ server: ServerProcess, from source: String, forwardedFor: String? = nil) throws -> TestClient {
        var options = WebSocketClient.Options()
        options.sourceAddress = source
        if let forwardedFor { options.extraHeaders = [("X-Forwarded-For", forwardedFor)] }
        return TestClient(try WebSocketClient(port: server.port, options: options))
    }

    static func connect(_ client: TestClient, _ token: String) -> JSONValue {
        client.request("connect", ["protocol": 1, "workspace": "team", "auth": ["token": .string(token)]])
    }

    /// Floods from one address: the first `authFailureBurst` tokens are checked and refused;
    /// then a new connection from there is turned away before its handshake (HTTP 429 with
    /// `Retry-After`), the ones after it, which came back sooner than told, are closed as soon as
    /// they are accepted (unless the address is a trusted proxy's: its connections are read to
    /// find the client they stand for, and each gets its 429), and a socket it opened before is
    /// refused unchecked and closed with 4012.
    static func flood(_ server: ServerProcess, from source: String, forwardedFor: String? = nil,
                      throughTrustedProxy: Bool = false) throws {
        let early = try client(server, from: source, forwardedFor: forwardedFor)
        for attempt in 0..<5 {
            let reply = connect(try client(server, from: source, forwardedFor: forwardedFor), forged())
            #expect(reply["error"]?["code"] == "unauthenticated", "attempt \(attempt): \(reply)")
        }
        #expect(upgradeRefusal(server, from: source, forwardedFor: forwardedFor)?.status == 429)
        for _ in 0..<4 {
            if throughTrustedProxy {
                #expect(upgradeRefusal(server, from: source, forwardedFor: forwardedFor)?.status == 429)
            } else {
                #expect(closedUnanswered(server, from: source, forwardedFor: forwardedFor))
            }
        }
        let refused = connect(early, forged())
        #expect(refused["error"]?["code"] == "rate_limited", "\(refused)")
        #expect(refused["error"]?["field"] == "auth.token")
        #expect((refused["error"]?["retryAfterMs"]?.intValue ?? 0) > 0)
        #expect(early.waitForClose() == CloseCode.authenticationLimited.rawValue)
    }

    /// The HTTP status and body a WebSocket upgrade from `source` was refused with; nil if it was not.
    static func upgradeRefusal(_ server: ServerProcess, from source: String, forwardedFor: String? = nil)
        -> (status: Int, body: String)? {
        do {
            _ = try client(server, from: source, forwardedFor: forwardedFor)
            return nil
        } catch WebSocketClient.Failure.refused(let status, let body) {
            #expect(body.contains("too many failed authentications from this address; retry in"), "\(body)")
            return (status, body)
        } catch {
            Issue.record("\(error)")
            return nil
        }
    }

    /// Whether a WebSocket upgrade from `source` got no HTTP answer at all: the server closed
    /// the connection at accept.
    static func closedUnanswered(_ server: ServerProcess, from source: String, forwardedFor: String? = nil) -> Bool {
        do {
            _ = try client(server, from: source, forwardedFor: forwardedFor)
            Issue.record("the upgrade from \(source) went through")
            return false
        } catch WebSocketClient.Failure.refused(let status, let body) {
            Issue.record("answered \(status) \(body) instead of closed at accept")
            return false
        } catch {
            return true
        }
    }

    @Test func aFloodFromOneAddressIsRefusedUncheckedWhileAnotherAddressConnects() throws {
        let server = try Self.server()
        let legitimate = try Self.client(server, from: "127.0.0.1")
        #expect(Self.connect(legitimate, Self.good())["ok"] == true)

        try Self.flood(server, from: "127.0.0.2")
        #expect(legitimate.request("ping")["ok"] == true, "the scene connected before is untouched")
        let another = try Self.client(server, from: "127.0.0.1")
        #expect(Self.connect(another, Self.good("bob"))["ok"] == true, "another address connects as before")

        let metrics = try PrometheusParser(try server.http("/metrics").body)
        #expect(metrics.values("panes_authentications_failed_total") == [5])
        #expect(metrics.values("panes_authentications_limited_total") == [6])
        #expect(metrics.values("panes_auth_failure_addresses") == [1])
    }

    @Test func behindATrustedProxyTheForwardedClientCountsAndOnlyThere() throws {
        let server = try Self.server(extra: ["--trusted-proxy", "127.0.0.3"])
        try Self.flood(server, from: "127.0.0.3", forwardedFor: "203.0.113.9", throughTrustedProxy: true)
        // Another client behind the same proxy is another address.
        let neighbour = try Self.client(server, from: "127.0.0.3", forwardedFor: "203.0.113.10")
        #expect(Self.connect(neighbour, Self.good())["ok"] == true)
        // A client that is not the proxy cannot pick its address with the header.
        try Self.flood(server, from: "127.0.0.2", forwardedFor: "203.0.113.11")
        #expect(Self.closedUnanswered(server, from: "127.0.0.2", forwardedFor: "203.0.113.12"))
    }

    /// An address that was told when to come back is closed at accept only until then: once
    /// `authFailuresPerMinute` gives it another attempt its token is checked again, and after
    /// that failure it is first told again (429) before it is closed unread.
    @Test func anAddressClosedAtAcceptIsCheckedAgainWhenItsTimeComes() throws {
        // One attempt back every 500 ms after a burst of two.
        let server = try Self.server(settings: ["authFailureBurst": 2, "authFailuresPerMinute": 120])
        for _ in 0..<2 {
            #expect(Self.connect(try Self.client(server, from: "127.0.0.4"), Self.forged())["error"]?["code"] == "unauthenticated")
        }
        #expect(Self.upgradeRefusal(server, from: "127.0.0.4")?.status == 429)
        #expect(Self.closedUnanswered(server, from: "127.0.0.4"))
        Thread.sleep(forTimeInterval: 0.6)
        let checked = Self.connect(try Self.client(server, from: "127.0.0.4"), Self.forged())
        #expect(checked["error"]?["code"] == "unauthenticated", "its time came: the token is checked again: \(checked)")
        #expect(Self.upgradeRefusal(server, from: "127.0.0.4")?.status == 429, "told again after that failure")
        #expect(Self.closedUnanswered(server, from: "127.0.0.4"))
    }

    @Test func serveRefusesATrustedProxyThatIsNotAnAddress() throws {
        let (status, errors) = try ServerProcess.runToExit(["serve", "--port", "0", "--store", "memory",
                                                            "--trusted-proxy", "proxy.internal"])
        #expect(status != 0 && errors.contains("--trusted-proxy proxy.internal is not an IP address"), "\(errors)")
    }
}
