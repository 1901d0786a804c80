import Foundation
import PanesCore
import PanesTransport
import Testing

/// Frames, origins and HTTP endpoints, over real sockets.
@Suite struct TransportEndToEndTests {
    @Test func badInputGetsStructuredErrorsAndTheConnectionStaysUsable() throws {
        let server = try ServerProcess()
        let client = try server.client()
        _ = client.connect()
        client.sendRaw("{not json")
        let malformed = client.next { $0["type"] == "reply" }
        #expect(malformed?["error"]?["code"] == "malformed_json")
        #expect(client.request("warp")["error"]?["code"] == "unknown_type")
        #expect(client.request("lifecycle", ["visible": true])["error"]?["field"] == "focused")
        #expect(client.request("ping")["ok"] == true)
    }

    @Test func aMessageOverTheHardLimitClosesWith1009() throws {
        let server = try ServerProcess(config: ["settings": ["maxMessageBytes": 4096]])
        let client = try server.client()
        _ = client.connect()
        client.sendRaw(#"{"type":"ping","id":1,"pad":""# + String(repeating: "x", count: 5000) + #""}"#)
        #expect(client.waitForClose() == 1009)
    }

    @Test func binaryFramesCloseWith1003() throws {
        let server = try ServerProcess()
        let client = try server.client()
        client.socket.send([1, 2, 3], binary: true)
        #expect(client.waitForClose() == 1003)
    }

    @Test func browsersFromOtherOriginsAreRefused() throws {
        let server = try ServerProcess()
        #expect(throws: (any Error).self) { try server.client(origin: "http://evil.example") }
        let sameOrigin = try server.client(origin: "http://127.0.0.1:\(server.port)")
        _ = sameOrigin.connect()
        let allowed = try ServerProcess(extra: ["--allow-origin", "http://localhost:3000"])
        _ = try allowed.client(origin: "http://localhost:3000").connect()
    }

    @Test func healthAndMetricsAreServedOverHTTP() throws {
        let server = try ServerProcess()
        let client = try server.client()
        _ = client.connect(["state": ["visible": true, "focused": true]])
        client.sendRaw("nope")
        _ = client.next { $0["type"] == "reply" }
        #expect(try server.http("/healthz") == (200, "ok\n"))
        let metrics = try server.http("/metrics").body
        #expect(metrics.contains("panes_connections 1"))
        #expect(metrics.contains(#"panes_scenes{state="foregroundActive"} 1"#))
        #expect(metrics.contains(#"panes_errors_total{code="malformed_json"} 1"#))
        #expect(metrics.contains(#"panes_messages_in_total{type="connect"} 1"#))
        #expect(try server.http("/nowhere").status == 404)
    }

    @Test func aConnectionThatNeverSendsConnectIsClosed() throws {
        let server = try ServerProcess(config: ["settings": ["connectTimeoutMs": 300]])
        let client = try server.client()
        #expect(client.waitForClose() == CloseCode.connectTimeout.rawValue)
    }
}
