@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// The connect timeout's queue: deadlines handed out in order once passed, and the entries of
/// connections that no longer wait dropped before the queue grows, so a burst of connects
/// leaves no entry per connection behind; the hub's use of it at the end.
@Suite struct TimeoutQueueTests {
    @Test func expiredConnectionsComeOutInOrderAndOnlyOnce() {
        var queue = TimeoutQueue()
        for i in 1...5 { queue.append(ConnectionID(UInt64(i)), deadline: Millis(i * 10)) }
        #expect(queue.nextDeadline == 10)
        #expect(queue.popExpired(now: 9).isEmpty)
        #expect(queue.popExpired(now: 30) == [ConnectionID(1), ConnectionID(2), ConnectionID(3)])
        #expect(queue.nextDeadline == 40 && queue.count == 2)
        #expect(queue.popExpired(now: 100) == [ConnectionID(4), ConnectionID(5)])
        #expect(queue.nextDeadline == nil && queue.count == 0)
    }

    /// Dropping keeps the connections still waiting with their deadlines, in order.
    @Test func droppingSettledEntriesKeepsTheOthersInOrder() {
        var queue = TimeoutQueue()
        for i in 1...10 { queue.append(ConnectionID(UInt64(i)), deadline: Millis(i)) }
        _ = queue.popExpired(now: 2)  // 1 and 2 handed out already
        queue.dropSettled { $0.rawValue % 2 == 0 }
        #expect(queue.count == 4)
        #expect(queue.nextDeadline == 3)
        #expect(queue.popExpired(now: 8) == [ConnectionID(3), ConnectionID(5), ConnectionID(7)])
        #expect(queue.popExpired(now: 100) == [ConnectionID(9)])
    }

    /// Connections that connect as fast as others open (a reconnect storm, a benchmark's
    /// 10,000 idle scenes): the queue stays the size of the ones waiting at once.
    @Test func aBurstOfConnectionsThatConnectLeavesNoEntryPerConnection() {
        var queue = TimeoutQueue()
        var waiting: Set<UInt64> = []
        for i in UInt64(1)...10_000 {
            if queue.isFull { queue.dropSettled { !waiting.contains($0.rawValue) } }
            queue.append(ConnectionID(i), deadline: Millis(i))
            waiting.insert(i)
            if i > 100 { waiting.remove(i - 100) }  // 100 still connecting at any time
        }
        #expect(queue.count <= 2 * TimeoutQueue.compactingFrom + 100)
        #expect(queue.capacity <= 512, "capacity \(queue.capacity)")
        // The ones still waiting keep their deadlines, in order (entries of ones that settled
        // since the last drop come out too: the hub looks at each).
        let expired = queue.popExpired(now: .max)
        #expect(expired.filter { waiting.contains($0.rawValue) } == (UInt64(9_901)...10_000).map { ConnectionID($0) })
        #expect(expired == expired.sorted())
    }

    /// Nothing settles (connections opened and held without a `connect`): every deadline stays.
    @Test func connectionsThatNeverConnectAllKeepTheirDeadlines() {
        var queue = TimeoutQueue()
        var looks = 0
        for i in UInt64(1)...10_000 {
            if queue.isFull { queue.dropSettled { _ in looks += 1; return false } }
            queue.append(ConnectionID(i), deadline: Millis(i))
        }
        #expect(queue.count == 10_000)
        #expect(looks < 4 * 10_000, "looked \(looks) times")  // amortised O(1) an append
        #expect(queue.popExpired(now: 10_000) == (1...10_000).map { ConnectionID(UInt64($0)) })
    }

    /// One settling between each pair of opens, with many waiting: the queue doubles rather
    /// than looking at every entry again at each open.
    @Test func fewSettlingDoesNotMakeEveryAppendScanTheQueue() {
        var queue = TimeoutQueue()
        var looks = 0
        for i in UInt64(1)...20_000 {
            if queue.isFull { queue.dropSettled { id in looks += 1; return id.rawValue == i - 1 } }
            queue.append(ConnectionID(i), deadline: Millis(i))
        }
        #expect(looks < 4 * 20_000, "looked \(looks) times")
    }

    /// The hub: after many connections have connected, one that never sends `connect` is
    /// still closed at its timeout, and the queue holds no entry for those that connected.
    @Test func theHubStillTimesOutAConnectionThatNeverConnectsAfterABurst() {
        var settings = Settings()
        settings.maxSessionsPerUser = 10_000
        var harness = HubHarness(settings: settings)
        let silent = harness.open()
        for _ in 0..<1_000 { _ = harness.connect() }
        let late = harness.open()
        #expect(harness.hub.awaitingConnect.count < 2 * TimeoutQueue.compactingFrom + 2)
        harness.clock.advance(Millis(settings.connectTimeoutMs) + 1)
        let effects = harness.run(.tick)
        #expect(effects.closes(silent) == [.connectTimeout])
        #expect(effects.closes(late) == [.connectTimeout])
        #expect(harness.hub.scenes.count == 1_000, "the scenes stay")
    }

    /// Opens a connection, waits until it is `sentAfter` into its connect timeout, and sends a
    /// `connect` resuming alice's live session: it waits for the liveness probe of `original`.
    static func connectThatWaitsForAProbe(_ harness: inout HubHarness, of session: JSONValue,
                                          sentAfter: Millis) -> ConnectionID {
        let late = harness.open()
        harness.clock.advance(sentAfter)
        let effects = harness.send(late, "connect", ["protocol": 1, "auth": ["name": "alice"],
                                                     "session": HubHarness.credentials(session)])
        #expect(effects.messages(to: late).isEmpty, "the connect waits")
        return late
    }

    /// Review R1: a `connect` still waiting when the connection's deadline passes (here for a
    /// probe whose answer makes a fork, over `maxSessionsPerUser`) fails after it: the
    /// connection is back to waiting for a `connect`, and is still closed at a deadline, not
    /// left open with no scene for as long as it answers pings.
    @Test func aConnectThatFailsAfterTheDeadlineStillTimesOut() {
        var settings = Settings()
        settings.maxSessionsPerUser = 1
        var harness = HubHarness(settings: settings)
        let (original, result) = harness.connect()
        let timeout = Millis(settings.connectTimeoutMs)
        let late = Self.connectThatWaitsForAProbe(&harness, of: result, sentAfter: timeout - 1_000)
        harness.clock.advance(1_001)
        #expect(harness.run(.tick).closes(late).isEmpty, "its connect is still being answered")

        let failed = harness.run(.pong(original)).messages(to: late).first { $0["type"] == "reply" }
        #expect(failed?["error"]?["code"] == "too_many", "\(String(describing: failed))")
        harness.clock.advance(timeout)
        let effects = harness.run(.tick)
        #expect(effects.closes(late) == [.connectTimeout])
        #expect(effects.closes(original).isEmpty)
    }

    /// Review R2: the entries dropped before the queue grows (`dropSettled`, from
    /// `compactingFrom` entries on) keep the one of a connection whose `connect` is still being
    /// answered, so that it is closed if that connect fails.
    @Test func aWaitingConnectKeepsItsDeadlineThroughTheDropsOfABurst() {
        var settings = Settings()
        settings.maxSessionsPerUser = 1
        var harness = HubHarness(settings: settings)
        let (original, result) = harness.connect()
        let timeout = Millis(settings.connectTimeoutMs)
        let late = Self.connectThatWaitsForAProbe(&harness, of: result, sentAfter: timeout - 1_000)
        for i in 0..<200 { _ = harness.connect(name: "user-\(i)") }
        #expect(harness.hub.awaitingConnect.count < 2 * TimeoutQueue.compactingFrom, "drops happened")
        harness.clock.advance(1_001)
        #expect(harness.run(.tick).closes(late).isEmpty)

        let failed = harness.run(.pong(original)).messages(to: late).first { $0["type"] == "reply" }
        #expect(failed?["error"]?["code"] == "too_many", "\(String(describing: failed))")
        harness.clock.advance(timeout)
        #expect(harness.run(.tick).closes(late) == [.connectTimeout])
        #expect(harness.hub.scenes.count == 201, "the scenes stay")
    }
}
