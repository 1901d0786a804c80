import CLibWebSocketsAlloc
import Foundation
import PanesTestSupport
@testable import PanesTransport
import Testing

/// The transport alone, in process, over real sockets: what the runtime can ask of it.
@Suite struct WebSocketServerTests {
    static let loops: [EventLoop] = [.libev, .poll]

    @Test(arguments: loops)
    func pausingReadingHoldsTheSenderBackAndResumingDeliversEverythingInOrder(_ loop: EventLoop) throws {
        let (harness, client, id) = try connected(TransportConfiguration(maxMessageBytes: 1 << 20, eventLoop: loop), saying: "first")
        harness.onServiceThread { $0.pauseReading(id) }

        // Write until the kernel's buffers are full: only possible because nobody reads.
        let message = WebSocketFrame.text(String(repeating: "x", count: 64 * 1024)).encoded()
        var sentMessages = 0
        var pending = message[...]
        var blocked = false
        while sentMessages < 4_000 {
            let written = client.sendWithoutWaiting(Array(pending))
            #expect(written >= 0)
            if written == pending.count {
                sentMessages += 1
                pending = message[...]
            } else {
                pending = pending.dropFirst(written)
                if !client.waitUntilWritable(timeout: 1) { blocked = true; break }
            }
        }
        #expect(blocked, "the server kept reading a paused connection (\(sentMessages) messages went through)")
        #expect(harness.recorder.snapshot.messages.count == 1, "nothing was delivered while paused")

        harness.onServiceThread { $0.resumeReading(id) }
        let rest = client.sendWithoutWaiting(Array(pending))
        if rest < pending.count {
            #expect(client.waitUntilWritable(timeout: 10))
            client.sendRaw(Array(pending.dropFirst(max(rest, 0))))
        }
        sentMessages += 1
        client.send("last")
        #expect(harness.recorder.wait(timeout: 30) { $0.messages.count == sentMessages + 2 })
        let texts = harness.recorder.snapshot.messages.map(\.text)
        #expect(texts.first == "first" && texts.last == "last")
        #expect(texts.dropFirst().dropLast().allSatisfy { $0.utf8.count == 64 * 1024 })
    }

    /// `notifyBeforeWaiting` asked several times before the loop waits gets one
    /// `serverWillWait`, and none more until it is asked again; messages that arrive in one read
    /// and each ask get it once for all of them, not once each.
    @Test(arguments: loops)
    func theNoticeBeforeWaitingComesOnceForEverythingAskedInALoopTurn(_ loop: EventLoop) throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(eventLoop: loop))
        harness.recorder.notifiesOnMessage = true
        harness.onServiceThread { server in
            for _ in 0..<3 { server.notifyBeforeWaiting() }
        }
        #expect(harness.recorder.wait { $0.willWaits == 1 })
        // Another turn of the loop (the closure is posted to it) asks nothing: no notice. A
        // notice that turn gave anyway would come after the closure returned, before the loop
        // waited again (libev's prepare watcher, or the start of the next `lws_service`), so the
        // count is read after a second closure, which runs only after that wait.
        harness.onServiceThread { _ in }
        harness.onServiceThread { _ in }
        #expect(harness.recorder.snapshot.willWaits == 1)
        harness.onServiceThread { $0.notifyBeforeWaiting() }
        #expect(harness.recorder.wait { $0.willWaits == 2 })

        let client = try harness.client()
        // Twenty frames in one write, read together: each message asks, the notice comes once
        // for as many as were read in one turn.
        client.sendRaw((0..<20).flatMap { WebSocketFrame.text("m\($0)").encoded() })
        #expect(harness.recorder.wait { $0.messages.count == 20 })
        let notices = harness.recorder.wait { $0.willWaits > 2 } ? harness.recorder.snapshot.willWaits - 2 : 0
        #expect(notices >= 1 && notices < 20, "\(notices) notices for 20 messages")
    }

    /// A notice asked for from a timer's work comes before the loop next waits. On lws's poll
    /// loop, timers (and lws's own connection timeouts) run inside `lws_service` just before it
    /// takes `poll()`'s timeout: here there is no connection and no other timer, so a notice
    /// left for the next `lws_service` would wait for lws's 30-second housekeeping timer.
    @Test(arguments: loops)
    func aNoticeAskedForInATimersWorkComesBeforeTheLoopWaits(_ loop: EventLoop) throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(eventLoop: loop))
        harness.recorder.notifiesOnWake = true
        harness.onServiceThread { $0.wake(afterMilliseconds: 0) }
        #expect(harness.recorder.wait(timeout: 5) { $0.wakes.count == 1 && $0.willWaits == 1 })
    }

    /// Frames sent in one callback are written together, headers made by the transport, up to
    /// a bound: each arrives whole, in order, as its own final frame, whatever its length's
    /// encoding (7-bit, 16-bit, 64-bit) and kind.
    @Test(arguments: loops)
    func framesSentInOneCallbackArriveWholeAndInOrder(_ loop: EventLoop) throws {
        let together = try sendBurst(TransportConfiguration(maxMessageBytes: 1 << 20, eventLoop: loop))
        // The five small ones went in one write; the 64 KiB one did not fit beside them
        // (`maxCoalescedWriteBytes`), so it and the rest went through the queue, still in order.
        #expect(together == 5)
    }

    /// A connection's gathered frames are taken when written, leaving it no buffer (an idle scene
    /// keeps none): the next callback's frames are gathered afresh, and each round arrives whole
    /// and in order, written together again.
    @Test(arguments: loops)
    func framesGatheredAfterEarlierOnesWereWrittenArriveWholeAndInOrder(_ loop: EventLoop) throws {
        let (harness, client, id) = try connected(TransportConfiguration(maxMessageBytes: 1 << 20, eventLoop: loop))
        for round in 0..<3 {
            let payloads = [1, 126, 3_000, 2].map { length in (0..<length).map { UInt8(ascii: "a") + UInt8(($0 + round) % 26) } }
            harness.onServiceThread { server in
                for payload in payloads {
                    server.send(OutboundFrame(headroomAndPayload: [UInt8](repeating: 0, count: OutboundFrame.headroom) + payload,
                                              binary: false), to: id)
                }
            }
            var received: [[UInt8]] = []
            while received.count < payloads.count, let frame = client.nextFrame(timeout: 10) { received.append(frame.payload) }
            #expect(received == payloads, "round \(round)")
        }
        #expect(harness.onServiceThread { $0.framesWrittenTogether } == 12)
    }

    /// A reply to a connection's own message never overtakes the pong lws owes for a ping that
    /// came just before the message (in the same read, so lws parses both before the reply is
    /// sent); on libev the reply is written in a write turn before the loop waits again,
    /// without asking the kernel for write interest, and still after the pong.
    @Test(arguments: loops)
    func aReplyToAMessageFollowsThePongOfAPingSentJustBeforeIt(_ loop: EventLoop) throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(eventLoop: loop))
        harness.recorder.reply = { "re: " + $0 }
        let client = try harness.client()
        for round in 0..<3 {
            client.sendRaw(WebSocketFrame(.ping, Array("p\(round)".utf8)).encoded() + WebSocketFrame.text("m\(round)").encoded())
            #expect(client.nextFrame(timeout: 10) == WebSocketFrame(.pong, Array("p\(round)".utf8)), "round \(round)")
            #expect(client.nextFrame(timeout: 10) == WebSocketFrame.text("re: m\(round)"), "round \(round)")
        }
        client.send("alone")
        #expect(client.nextFrame(timeout: 10) == WebSocketFrame.text("re: alone"))
        #expect(harness.onServiceThread { $0.writeTurnsTaken } == (loop == .libev ? 4 : 0))
    }

    /// lws's header table for each upgrade comes from CLibWebSocketsAlloc's pool, which the
    /// transport installs as it starts (4 KiB data, 976-byte struct: two slots an upgrade), and
    /// the connection works as before. Other tests' servers share the process's pool, so only
    /// its count of tables served, which never falls, is compared.
    @Test(arguments: loops)
    func anUpgradesHeaderTableComesFromThePool(_ loop: EventLoop) throws {
        let before = pws_lws_allocator_counts().pooled
        let harness = try TransportHarness(configuration: TransportConfiguration(eventLoop: loop))
        harness.recorder.reply = { "re: " + $0 }
        let client = try harness.client()
        client.send("first")
        #expect(client.nextFrame(timeout: 10) == WebSocketFrame.text("re: first"))
        #expect(pws_lws_allocator_counts().pooled >= before + 2)
    }

    @Test func withCoalescingOffEachFrameIsWrittenOnItsOwn() throws {
        #expect(try sendBurst(TransportConfiguration(maxMessageBytes: 1 << 20, maxCoalescedWriteBytes: 0)) == 0)
    }

    /// A transport with one client whose first message (`saying`) has arrived, and its connection.
    private func connected(_ configuration: TransportConfiguration, saying first: String = "hello") throws
        -> (TransportHarness, WebSocketClient, UInt64) {
        let harness = try TransportHarness(configuration: configuration)
        let client = try harness.client()
        client.send(first)
        #expect(harness.recorder.wait { $0.messages.count == 1 })
        return (harness, client, harness.recorder.snapshot.messages[0].connection)
    }

    /// Sends frames of every header size in one callback and checks what arrives; returns how
    /// many were written together with others.
    private func sendBurst(_ configuration: TransportConfiguration) throws -> Int {
        let (harness, client, id) = try connected(configuration)
        let lengths = [0, 1, 125, 126, 127, 65_535, 65_536, 200_000, 3]
        let payloads = lengths.enumerated().map { index, length in
            (0..<length).map { UInt8(ascii: "a") + UInt8(($0 + index) % 26) }
        }
        harness.onServiceThread { server in
            for (index, payload) in payloads.enumerated() {
                let binary = index == 4
                server.send(OutboundFrame(headroomAndPayload: [UInt8](repeating: 0, count: OutboundFrame.headroom) + payload,
                                          binary: binary), to: id)
            }
        }
        var received: [WebSocketFrame] = []
        while received.count < payloads.count, let frame = client.nextFrame(timeout: 10) { received.append(frame) }
        #expect(received.count == payloads.count)
        for (index, frame) in received.enumerated() where index < payloads.count {
            #expect(frame.fin && frame.rsv == 0)
            #expect(frame.kind == (index == 4 ? .binary : .text), "frame \(index)")
            #expect(frame.payload == payloads[index], "frame \(index): \(frame.payload.count) bytes, sent \(payloads[index].count)")
        }
        let together = harness.onServiceThread { $0.framesWrittenTogether }
        // The connection goes on as before.
        client.send("again")
        #expect(harness.recorder.wait { $0.messages.count == 2 })
        return together
    }

    @Test(arguments: loops)
    func aWakeUpFiresOnceNotBeforeItsDeadlineAndALaterCallReplacesIt(_ loop: EventLoop) throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(eventLoop: loop))
        let armed = harness.onServiceThread { server in
            server.wake(afterMilliseconds: 20)
            server.wake(afterMilliseconds: 300) // replaces the first
            return WebSocketServer.monotonicMilliseconds()
        }
        #expect(harness.recorder.wait { $0.wakes.count == 1 })
        #expect(harness.recorder.snapshot.wakes[0] >= armed + 300, "the replaced 20 ms wake-up did not fire")
        // A second wake-up, as a marker: when it has fired, the first has not fired again.
        harness.onServiceThread { $0.wake(afterMilliseconds: 50) }
        #expect(harness.recorder.wait { $0.wakes.count == 2 })
        let third = harness.onServiceThread { _ in harness.recorder.snapshot.wakes.count }
        #expect(third == 2)
    }

    @Test(arguments: loops)
    func aSilentConnectionIsPingedAfterTheIntervalAndClosedWith4009AfterTwice(_ loop: EventLoop) throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(idlePingMilliseconds: 200, eventLoop: loop))
        var options = WebSocketClient.Options()
        options.answersPeer = false
        let connectedAt = WebSocketServer.monotonicMilliseconds()
        let client = try harness.client(options)
        let ping = client.nextFrame(timeout: 10)
        let pingedAt = WebSocketServer.monotonicMilliseconds()
        #expect(ping?.kind == .ping)
        #expect(pingedAt >= connectedAt + 200, "not pinged before its interval")
        let close = client.nextFrame(timeout: 10)
        #expect(close?.closeCode == 4009)
        #expect(WebSocketServer.monotonicMilliseconds() >= connectedAt + 400)
        #expect(harness.recorder.wait { $0.closed.count == 1 })
        #expect(harness.recorder.snapshot.closed.first?.abnormal == false, "the server closed it on purpose")
    }

    @Test func aConnectionThatAnswersPingsIsKeptAndItsPongsAreReported() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(idlePingMilliseconds: 100))
        let client = try harness.client()
        #expect(harness.recorder.wait { $0.pongs.count >= 3 })
        client.send("still here")
        #expect(harness.recorder.wait { $0.messages.count == 1 })
        #expect(harness.recorder.snapshot.closed.isEmpty)
    }

    /// More connections closed at once than `maxClosingHandshakes` lets in: each gets what it
    /// was sent and then its close frame, a few at a time, and every one ends.
    @Test(arguments: loops)
    func closingManyAtOnceClosesEveryOneAFewAtATime(_ loop: EventLoop) throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(maxClosingHandshakes: 2, eventLoop: loop))
        let clients = try (0..<12).map { _ in try harness.client() }
        #expect(harness.recorder.wait { $0.opened.count == 12 })
        let ids = harness.recorder.snapshot.opened
        harness.onServiceThread { server in
            for id in ids {
                server.send(OutboundFrame(text: "bye \(id)"), to: id)
                server.close(id, code: 1001, reason: "going away")
            }
        }
        for client in clients {
            let bye = client.nextFrame(timeout: 10)
            #expect(bye?.kind == .text && String(decoding: bye?.payload ?? [], as: UTF8.self).hasPrefix("bye "))
            #expect(client.nextFrame(timeout: 10)?.closeCode == 1001)
        }
        #expect(harness.recorder.wait { $0.closed.count == 12 })
        #expect(harness.recorder.snapshot.closed.allSatisfy { !$0.abnormal })
        #expect(harness.onServiceThread { $0.closingHandshakesPeak } == 2)
        withExtendedLifetime(clients) {}
    }

    @Test func aCloseThatCannotBeWrittenIsDroppedAfterTheIdleInterval() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(idlePingMilliseconds: 300))
        var options = WebSocketClient.Options()
        options.readsInBackground = false
        options.receiveBufferBytes = 4096
        let client = try harness.client(options)
        #expect(harness.recorder.wait { $0.opened.count == 1 })
        let id = harness.recorder.snapshot.opened[0]
        // Far more than the kernel buffers hold for a reader that reads nothing, then a close
        // that has to wait behind it.
        let frame = OutboundFrame(text: String(repeating: "y", count: 256 * 1024))
        harness.onServiceThread { server in
            for _ in 0..<16 { server.send(frame, to: id) }
            server.close(id, code: 1000, reason: "done")
        }
        #expect(harness.recorder.wait { $0.closed.count == 1 }, "the stuck connection was dropped")
        withExtendedLifetime(client) {}
    }

    /// `httpHeaderTimeoutMs` is lws's header timeout (PENDING_TIMEOUT_HOLDING_AH): a connection
    /// that has not sent all its headers by then is closed without an answer (with lws's own
    /// 10 s it stayed open past the 8 s waited here). On lws's poll loop, whose timers fire when
    /// due; on libev lws 4.1 fires a timeout only with the timer it had armed before (see
    /// `pev_timer`): a fresh `panes serve` closed such a connection after 27.6 s with 10 s and
    /// with 21 s alike.
    @Test func aConnectionThatDoesNotFinishItsHeadersInTheHeaderTimeoutIsClosed() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(eventLoop: .poll, httpHeaderTimeoutMilliseconds: 1_000))
        let client = try HTTPClient(port: harness.port)
        #expect(client.write(Array("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n".utf8)))
        #expect(client.closedByServer(timeout: 8), "the connection was still open")
        // One that sends its headers in time is upgraded as before.
        _ = try harness.client()
    }

    /// lws counts whole seconds: the setting is rounded up, never to 0 (which lws reads as
    /// "its default").
    @Test func theHeaderTimeoutIsRoundedUpToWholeSeconds() {
        #expect(WebSocketServer.headerTimeoutSeconds(1_000) == 1)
        #expect(WebSocketServer.headerTimeoutSeconds(1_001) == 2)
        #expect(WebSocketServer.headerTimeoutSeconds(21_000) == 21)
        #expect(WebSocketServer.headerTimeoutSeconds(0) == 1)
        // The default is past lws's body and file timeout, so a new connection's first timeout
        // is inserted ahead of every connection still sending its headers.
        #expect(WebSocketServer.headerTimeoutSeconds(TransportConfiguration().httpHeaderTimeoutMilliseconds)
            > WebSocketServer.lwsTimeoutSeconds)
    }

    @Test func refusedRequestsGetAStatusAndAReasonNotASilentClose() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        var badOrigin = WebSocketClient.Options(origin: "http://evil.example")
        badOrigin.timeout = 5
        #expect { try harness.client(badOrigin) } throws: { error in
            guard case WebSocketClient.Failure.refused(let status, let body) = error else { return false }
            return status == 403 && body.contains("not allowed")
        }
        var noSubprotocol = WebSocketClient.Options()
        noSubprotocol.subprotocols = []
        #expect { try harness.client(noSubprotocol) } throws: { error in
            guard case WebSocketClient.Failure.refused(let status, _) = error else { return false }
            return status == 400
        }
        var wrongPath = WebSocketClient.Options()
        wrongPath.path = "/elsewhere"
        #expect { try harness.client(wrongPath) } throws: { error in
            guard case WebSocketClient.Failure.refused(let status, _) = error else { return false }
            return status == 404
        }
        harness.onServiceThread { $0.refusingConnections = "the server is draining" }
        #expect { try harness.client() } throws: { error in
            guard case WebSocketClient.Failure.refused(let status, let body) = error else { return false }
            return status == 503 && body.contains("the server is draining")
        }
    }
}
