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

/// Idle connections: pinged when silent, closed when they never answer.
@Suite struct IdleConnectionEndToEndTests {
    @Test func aQuietClientThatAnswersPingsStaysConnected() throws {
        let server = try ServerProcess(config: ["settings": ["idlePingMs": 1000]])
        let client = try server.client()
        _ = client.connect()
        // Three ping intervals of silence; the client library answers each ping.
        #expect(client.next(timeout: 3.5) { _ in true } == nil)
        #expect(client.request("ping")["ok"] == true)
    }

    @Test func aClientThatNeverAnswersPingsIsClosedWith4009() throws {
        let server = try ServerProcess(config: ["settings": ["idlePingMs": 1000]])
        let socket = try RawSocket(port: server.port)
        try socket.send("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: panes.v1\r\n\r\n")
        let received = socket.readUntilClosed(timeout: 10)
        #expect(received.contains([0x89, 0x05] + Array("panes".utf8)), "first a ping")
        #expect(received.contains([0x0F, 0xA9] + Array("no answer to pings".utf8)), "then a close frame with code 4009")
    }
}

/// A bare TCP socket that speaks only what a test writes: for peers that misbehave on purpose.
final class RawSocket {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw ServerProcessError.didNotStart("connect failed") }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Everything received until the peer closes (or the timeout passes).
    func readUntilClosed(timeout: Double) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date(timeIntervalSinceNow: timeout)
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while Date() < deadline {
            guard poll(&pollfd, 1, 200) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer.prefix(count)
        }
        return received
    }
}

extension Array where Element == UInt8 {
    func contains(_ sequence: [UInt8]) -> Bool {
        guard sequence.count <= count else { return false }
        return (0...(count - sequence.count)).contains { Array(self[$0..<($0 + sequence.count)]) == sequence }
    }
}
