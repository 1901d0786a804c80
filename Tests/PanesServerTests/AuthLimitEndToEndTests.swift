import Foundation
import PanesCore
import PanesJSON
import PanesSecurityTestSupport
import PanesTestSupport
import Testing

/// Failed authentications limited per peer address, over real sockets (issue 26, item 5): a
/// flood of RS256 tokens with random signatures from one address is refused unchecked with
/// `rate_limited` and close 4012 past `authFailureBurst`, while a client from another address
/// connects as before; behind a trusted proxy the forwarded client address counts.
@Suite struct AuthLimitEndToEndTests {
    static let settings: JSONValue = ["authFailureBurst": 5, "authFailuresPerMinute": 6]

    static func server(extra: [String] = []) throws -> ServerProcess {
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

    /// Floods from one address until its connects are refused unchecked; returns those replies.
    static func flood(_ server: ServerProcess, from source: String, forwardedFor: String? = nil) throws -> [JSONValue] {
        var limited: [JSONValue] = []
        for attempt in 0..<12 {
            let flooder = try client(server, from: source, forwardedFor: forwardedFor)
            let reply = connect(flooder, forged())
            if attempt < 5 {
                #expect(reply["error"]?["code"] == "unauthenticated", "attempt \(attempt): \(reply)")
            } else {
                #expect(reply["error"]?["code"] == "rate_limited", "attempt \(attempt): \(reply)")
                #expect(reply["error"]?["field"] == "auth.token")
                #expect(flooder.waitForClose() == CloseCode.authenticationLimited.rawValue)
                limited.append(reply)
            }
        }
        return limited
    }

    @Test func aFloodFromOneAddressIsRefusedUncheckedWhileAnotherAddressConnects() throws {
        let server = try Self.server()
        let legitimate = try Self.client(server, from: "127.0.0.1")
        #expect(Self.connect(legitimate, Self.good())["ok"] == true)

        let limited = try Self.flood(server, from: "127.0.0.2")
        #expect(limited.allSatisfy { ($0["error"]?["retryAfterMs"]?.intValue ?? 0) > 0 })
        // A flooder that keeps its socket and sends connect after connect gets one refusal: then 4012.
        let persistent = try Self.client(server, from: "127.0.0.2")
        #expect(Self.connect(persistent, Self.forged())["error"]?["code"] == "rate_limited")
        #expect(persistent.waitForClose() == CloseCode.authenticationLimited.rawValue)

        #expect(legitimate.request("ping")["ok"] == true, "the scene connected before is untouched")
        let another = try Self.client(server, from: "127.0.0.1")
        #expect(Self.connect(another, Self.good("bob"))["ok"] == true, "another address connects as before")

        let metrics = try PrometheusParser(try server.http("/metrics").body)
        #expect(metrics.values("panes_authentications_failed_total") == [5])
        #expect(metrics.values("panes_authentications_limited_total") == [8])
    }

    @Test func behindATrustedProxyTheForwardedClientCountsAndOnlyThere() throws {
        let server = try Self.server(extra: ["--trusted-proxy", "127.0.0.3"])
        _ = try Self.flood(server, from: "127.0.0.3", forwardedFor: "203.0.113.9")
        // Another client behind the same proxy is another address.
        let neighbour = try Self.client(server, from: "127.0.0.3", forwardedFor: "203.0.113.10")
        #expect(Self.connect(neighbour, Self.good())["ok"] == true)
        // A client that is not the proxy cannot pick its address with the header.
        _ = try Self.flood(server, from: "127.0.0.2", forwardedFor: "203.0.113.11")
        let pretender = try Self.client(server, from: "127.0.0.2", forwardedFor: "203.0.113.12")
        #expect(Self.connect(pretender, Self.good())["error"]?["code"] == "rate_limited")
    }

    @Test func serveRefusesATrustedProxyThatIsNotAnAddress() throws {
        let (status, errors) = try ServerProcess.runToExit(["serve", "--port", "0", "--store", "memory",
                                                            "--trusted-proxy", "proxy.internal"])
        #expect(status != 0 && errors.contains("--trusted-proxy proxy.internal is not an IP address"), "\(errors)")
    }
}
