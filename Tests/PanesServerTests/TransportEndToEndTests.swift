import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Frames and HTTP endpoints, over real sockets against the real binary.
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

    /// Under a memory checker (which sees malloc's blocks only) lws's header tables can be left
    /// on malloc: `PANES_LWS_HEADER_POOL=off` turns CLibWebSocketsAlloc's pool off, the server
    /// says so, and connections work as before. Without it the pool is on.
    @Test func theHeaderTablePoolIsTurnedOffForMemoryCheckersByTheEnvironment() throws {
        let off = try ServerProcess(extra: ["--store", "memory", "--log-level", "notice"],
                                    environment: ["PANES_LWS_HEADER_POOL": "off"])
        #expect(off.waitForLog("lws's header tables come from malloc: PANES_LWS_HEADER_POOL=off", timeout: 20))
        let client = try off.client()
        #expect(client.connect()["session"] != nil)
        #expect(client.request("ping")["ok"] == true)
        let on = try ServerProcess(extra: ["--store", "memory", "--log-level", "notice"])
        _ = try on.client().connect()
        #expect(!on.log.contains("header tables come from malloc"), "\(on.log)")
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

    /// The hub's deadline for the `connect` is armed before the loop waits (`serverWillWait`),
    /// on either loop.
    @Test(arguments: ["libev", "poll"])
    func aConnectionThatNeverSendsConnectIsClosed(_ loop: String) throws {
        let server = try ServerProcess(config: ["settings": ["connectTimeoutMs": 300]], extra: ["--event-loop", loop])
        let client = try server.client()
        #expect(client.waitForClose() == CloseCode.connectTimeout.rawValue)
    }

    @Test(arguments: ["libev", "poll"])
    func bothEventLoopsServeTheProtocol(_ loop: String) throws {
        let server = try ServerProcess(extra: ["--event-loop", loop])
        let client = try server.client()
        _ = client.connect()
        #expect(client.request("ping")["ok"] == true)
        #expect(try server.http("/healthz") == (200, "ok\n"))
    }
}

/// Idle connections: pinged when silent, closed when they never answer.
@Suite struct IdleConnectionEndToEndTests {
    @Test func aQuietClientThatAnswersPingsStaysConnected() throws {
        let server = try ServerProcess(config: ["settings": ["idlePingMs": 1000]])
        let client = try server.client()
        _ = client.connect()
        // Three ping intervals of silence; the client answers each ping, as browsers do.
        #expect(client.next(timeout: 3.5) { _ in true } == nil)
        #expect(client.request("ping")["ok"] == true)
    }

    @Test func aClientThatNeverAnswersPingsIsPingedThenClosedWith4009() throws {
        let server = try ServerProcess(config: ["settings": ["idlePingMs": 1000]])
        var options = WebSocketClient.Options()
        options.answersPeer = false
        let socket = try WebSocketClient(port: server.port, options: options)
        let frames = socket.framesUntilEnd(timeout: 10)
        #expect(frames.first == WebSocketFrame(.ping, Array("panes".utf8)), "first a ping")
        #expect(frames.last?.closeCode == 4009, "then a close frame with 4009: \(frames)")
        #expect(frames.last?.closeReason == "no answer to pings")
    }
}
