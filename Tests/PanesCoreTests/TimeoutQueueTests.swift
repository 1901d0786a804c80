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
}
