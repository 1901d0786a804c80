import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// A client that stops reading: the server bounds what it holds for it (4008), and a drain
/// does not wait for it longer than `drainTimeoutMs`.
@Suite struct TransportBackpressureTests {
    /// What overflows its queue is what others cause (32 changes of 512 KiB to a preference it
    /// observes), and it sends nothing after its `observe`. A client still sending while the
    /// server closes it does not see the close: lws drops a connection that sends data during its
    /// close handshake (within half a second here) with that input unread, so the kernel resets
    /// the connection and discards the close frame still queued behind the events. Overflowed by
    /// replies to requests it went on sending, the client saw 4008 only when it read that far
    /// before its next request reached the server, which a loaded machine did not always allow.
    @Test func aClientThatNeverReadsIsClosedWith4008WhenItsQueueOverflows() throws {
        // idlePingMs also bounds how long a close may take to get out; a long one keeps that
        // from racing this test on a loaded machine.
        let server = try ServerProcess(
            config: ["settings": ["maxOutboundQueue": 16, "maxPreferenceValueBytes": 1_048_576, "idlePingMs": 600_000]],
            extra: ["--store", "memory", "--log-level", "notice"])
        let client = try Self.stalledClient(server)
        client.send(#"{"type":"observe","id":2,"domain":"user","keyPath":"pad","options":["new"]}"#)
        let observing = #"panes_messages_in_total{type="observe"} 1"#
        #expect(try Self.poll(120) { try server.http("/metrics").body.contains(observing) }, "the server read the observe")
        let writer = try server.client()
        _ = writer.connect(name: "stalled")
        let pad = String(repeating: "p", count: 512 * 1024)
        for n in 0..<32 {
            #expect(writer.request("setPreference", ["domain": "user", "keyPath": "pad", "value": .string("\(n)\(pad)")],
                                   timeout: 120)["ok"] == true)
        }
        #expect(server.waitForLog("closing a connection that reads too slowly", timeout: 120))
        // Catching up now: the events that were already on their way, then the close.
        let frames = client.readUntilClose(timeout: 120)
        #expect(frames.last?.closeCode == CloseCode.slowConsumer.rawValue,
                "\(frames.count) frames; server running: \(server.process.isRunning); log: \(server.log.suffix(2000))")
        #expect(frames.last?.closeReason == "outbound queue overflow")
        // Its two replies, the close, and not every event: the queue was dropped.
        #expect(frames.count < 3 + 32, "not every event was sent: the queue was dropped")
    }

    @Test func aDrainDoesNotWaitForAClientThatNeverReadsLongerThanDrainTimeoutMs() throws {
        let server = try ServerProcess(config: ["settings": ["drainTimeoutMs": 1_000, "maxUserInfoBytes": 1_048_576]],
                                       extra: ["--store", "memory", "--log-level", "notice"])
        let client = try Self.stalledClient(server)
        Self.sendLargeRequests(16, over: client)
        let read = #"panes_messages_in_total{type="setUserInfo"} 16"#
        #expect(try Self.poll(120) { try server.http("/metrics").body.contains(read) }, "the server read every request")
        server.kill(SIGTERM)
        let status = server.waitForExit(timeout: 60)
        #expect(status == 0, "the server exited, and cleanly")
        #expect(server.log.contains("drained"))
        #expect(server.log.contains("connectionsLeft=1"), "it left at the deadline with the stalled client still connected")
        withExtendedLifetime(client) {}
    }

    /// A client that reads nothing after the handshake, so the server's writes to it back up.
    static func stalledClient(_ server: ServerProcess) throws -> WebSocketClient {
        var options = WebSocketClient.Options()
        options.readsInBackground = false
        // Small, but not below one loopback segment (64 KiB): a window under a segment makes
        // the sender wait for TCP's persist timer, and catching up would take minutes.
        options.receiveBufferBytes = 128 * 1024
        // Logging its 512 KiB messages (PANES_FRAME_LOG) would slow the catch-up past lws's close
        // timeout; what it sends and hears is ordinary `setUserInfo`, validated elsewhere.
        options.recordsFrames = false
        let client = try WebSocketClient(port: server.port, options: options)
        client.send(#"{"type":"connect","id":1,"protocol":1,"auth":{"name":"stalled"},"client":"tests"}"#)
        return client
    }

    /// `count` setUserInfo requests of 512 KiB each; each reply is as large, far more than the
    /// kernel buffers between the two hold.
    static func sendLargeRequests(_ count: Int, over client: WebSocketClient) {
        let pad = String(repeating: "p", count: 512 * 1024)
        for id in 2..<(2 + count) {
            client.send(#"{"type":"setUserInfo","id":\#(id),"mode":"replace","userInfo":{"pad":"\#(pad)"}}"#)
        }
    }

    /// Checks `condition` until it holds (true) or `timeout` seconds pass (false).
    static func poll(_ timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.05) // between checks of a condition, not a wait for time to pass
        }
        return try condition()
    }
}

extension ServerProcess {
    /// Waits up to `timeout` seconds for the process to exit; its status, or nil if it did not
    /// (then it is killed).
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            kill(SIGKILL)
            _ = wait()
            return nil
        }
        return wait()
    }
}
