import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Origin and Host, checked on every HTTP request and every upgrade against an allow-list
/// that never comes from the request (issue 13, item 1). Real binary, real sockets.
@Suite struct TransportOriginTests {
    @Test func aDNSRebindingPageCanNeitherOpenAWebSocketNorReadAnything() throws {
        let server = try ServerProcess()
        let evil = "evil.example:\(server.port)"
        // Origin and Host agree, as they do after rebinding; the old check let this through.
        #expect(Self.upgradeStatus(server, origin: "http://\(evil)", host: evil) == 403)
        #expect(Self.upgradeStatus(server, origin: nil, host: evil) == 403)
        for path in ["/metrics", "/healthz", "/", "/index.html"] {
            let response = try Self.http(server, path, headers: ["Host": evil])
            #expect(response.status == 403, "\(path)")
            #expect(!response.body.contains("panes_connections"))
        }
        server.kill(SIGTERM)
        server.wait()
        #expect(server.log.contains("reason=Host \(evil) is not one of this server's names"))
    }

    @Test(arguments: ["null", "", "127.0.0.1", "//127.0.0.1", "https://127.0.0.1:PORT", "ws://127.0.0.1:PORT",
                      "http://127.0.0.1:PORT/", "http://127.0.0.1:1", "http://evil.example", "HTTP://127.0.0.1:PORT@evil"])
    func aBadOrForeignOriginIsRefusedWith403AndAReasonInTheLog(_ template: String) throws {
        let server = try ServerProcess()
        let origin = template.replacingOccurrences(of: "PORT", with: "\(server.port)")
        #expect(Self.upgradeStatus(server, origin: origin, host: "127.0.0.1:\(server.port)") == 403)
        #expect(try Self.http(server, "/healthz", headers: ["Origin": origin]).status == 403)
        server.kill(SIGTERM)
        server.wait()
        #expect(server.log.components(separatedBy: "refused an HTTP request").count == 3, "two refusals logged")
        #expect(server.log.contains("status=403"))
        #expect(server.log.contains("reason=Origin"))
    }

    @Test func theServersOwnOriginsAreAllowedOnLoopback() throws {
        let server = try ServerProcess()
        for origin in ["http://127.0.0.1:\(server.port)", "http://localhost:\(server.port)", "http://LOCALHOST:\(server.port)"] {
            #expect(Self.upgradeStatus(server, origin: origin, host: "127.0.0.1:\(server.port)") == 101, "\(origin)")
        }
        #expect(Self.upgradeStatus(server, origin: nil, host: "localhost:\(server.port)") == 101, "no Origin: not a browser")
        #expect(try Self.http(server, "/healthz", headers: ["Host": "localhost:\(server.port)"]).status == 200)
    }

    @Test(arguments: ["--allowed-origin", "--allow-origin"])
    func anAllowedOriginIsAcceptedUnderEitherSpellingWithDefaultPortsNormalised(_ option: String) throws {
        let server = try ServerProcess(extra: [option, "http://localhost:3000", option, "https://app.example:443"])
        let host = "127.0.0.1:\(server.port)"
        #expect(Self.upgradeStatus(server, origin: "http://localhost:3000", host: host) == 101)
        #expect(Self.upgradeStatus(server, origin: "https://app.example", host: host) == 101)
        #expect(Self.upgradeStatus(server, origin: "http://app.example", host: host) == 403, "the scheme counts")
        #expect(Self.upgradeStatus(server, origin: "http://localhost:3001", host: host) == 403, "the port counts")
    }

    /// CONCEPTS.md, invariant 10: an allowed name is its bytes. `Host: \u{212A}iosk.example`
    /// (KELVIN SIGN) lower-cases and normalises to `kiosk.example`; it was let through as that.
    /// ASCII case still folds, as host names do.
    @Test func aHostOrOriginThatIsAnAllowedOneOnlyCanonicallyIsRefused() throws {
        let server = try ServerProcess(extra: ["--allowed-origin", "http://kiosk.example"])
        let twin = "\u{212A}iosk.example"
        #expect(Self.upgradeStatus(server, origin: "http://kiosk.example", host: "kiosk.example") == 101)
        #expect(Self.upgradeStatus(server, origin: "http://KIOSK.example", host: "KIOSK.example") == 101)
        #expect(Self.upgradeStatus(server, origin: "http://kiosk.example", host: twin) == 403)
        #expect(Self.upgradeStatus(server, origin: "http://\(twin)", host: "kiosk.example") == 403)
        #expect(Self.upgradeStatus(server, origin: nil, host: "\(twin):80") == 403)
        #expect(try Self.http(server, "/healthz", headers: ["Host": twin]).status == 403)
        server.kill(SIGTERM)
        server.wait()
        #expect(server.log.contains("reason=Host \(twin) is not one of this server's names"))
        #expect(server.log.contains("reason=Origin"))
    }

    @Test func theConfigurationFilesAllowedOriginsCountToo() throws {
        let server = try ServerProcess(config: ["allowedOrigins": ["http://localhost:3000"]])
        #expect(Self.upgradeStatus(server, origin: "http://localhost:3000", host: "127.0.0.1:\(server.port)") == 101)
    }

    @Test func aPublicURLBehindAProxyIsAnOriginAndAHostName() throws {
        let server = try ServerProcess(extra: ["--public-url", "https://panes.example.com/app/"])
        #expect(Self.upgradeStatus(server, origin: "https://panes.example.com", host: "panes.example.com") == 101)
        #expect(try Self.http(server, "/healthz", headers: ["Host": "panes.example.com"]).status == 200)
        #expect(Self.upgradeStatus(server, origin: "https://panes.example.com", host: "other.example.com") == 403)
    }

    // MARK: Helpers

    /// The status the upgrade was answered with: 101, or the refusal's.
    static func upgradeStatus(_ server: ServerProcess, origin: String?, host: String) -> Int? {
        var options = WebSocketClient.Options(origin: origin)
        options.hostHeader = host
        do {
            _ = try WebSocketClient(port: server.port, options: options)
            return 101
        } catch WebSocketClient.Failure.refused(let status, _) {
            return status
        } catch {
            return nil
        }
    }

    static func http(_ server: ServerProcess, _ path: String, headers: [String: String]) throws -> (status: Int, body: String) {
        try ServerProcess.http(port: server.port, path, headers: headers)
    }
}
