@testable import PanesTransport
import Testing

/// The idle detector's lists stay in deadline order, so the next deadline is always a head.
@Suite struct IdleDetectorTests {
    func connection(_ id: UInt64) -> ServerConnection {
        ServerConnection(id: id, wsi: OpaquePointer(bitPattern: 0x10)!, now: 0)
    }

    @Test func silentConnectionsArePingedThenReportedInTheOrderTheyWentSilent() {
        let idle = IdleDetector(pingAfterMilliseconds: 100)
        let (a, b, c) = (connection(1), connection(2), connection(3))
        idle.heard(a, at: 0)
        idle.heard(b, at: 10)
        idle.heard(c, at: 20)
        #expect(idle.nextDeadline == 100)
        idle.heard(a, at: 50) // a spoke: it moves to the back
        #expect(idle.nextDeadline == 110)
        #expect(idle.expire(at: 109).ping.isEmpty)
        #expect(idle.expire(at: 125).ping.map(\.id) == [2, 3])
        #expect(idle.nextDeadline == 150, "a's ping comes before b's close")
        #expect(idle.expire(at: 150).ping.map(\.id) == [1])
        #expect(idle.nextDeadline == 210)
        idle.heard(c, at: 200) // c answered its ping
        let late = idle.expire(at: 250)
        #expect(late.unresponsive.map(\.id) == [2, 1])
        #expect(idle.nextDeadline == 300)
        #expect(idle.count == 1)
    }

    @Test func aConnectionSilentForTwiceTheIntervalWithoutAPingIsReportedAtOnce() {
        let idle = IdleDetector(pingAfterMilliseconds: 100)
        let a = connection(1)
        idle.heard(a, at: 0)
        let expired = idle.expire(at: 500)
        #expect(expired.ping.isEmpty)
        #expect(expired.unresponsive.map(\.id) == [1])
        #expect(idle.nextDeadline == nil)
    }

    @Test func aCloseThatNeverFinishesIsReportedAfterTheIntervalAndHearingDoesNotDelayIt() {
        let idle = IdleDetector(pingAfterMilliseconds: 100)
        let (a, b) = (connection(1), connection(2))
        idle.heard(a, at: 0)
        idle.heard(b, at: 0)
        idle.closeRequested(a, at: 30)
        idle.heard(a, at: 60)
        #expect(idle.nextDeadline == 100)
        let first = idle.expire(at: 100)
        #expect(first.ping.map(\.id) == [2])
        #expect(first.stuck.isEmpty)
        #expect(idle.expire(at: 130).stuck.map(\.id) == [1])
        idle.forget(b)
        #expect(idle.count == 0)
        #expect(idle.nextDeadline == nil)
    }

    /// Hearing from a quiet connection moves it to the back in place (`moveToBack`): from the
    /// head, the middle and the back itself, the order stays that of the last frames heard.
    @Test func aQuietConnectionHeardAgainGoesToTheBackFromAnywhere() {
        let idle = IdleDetector(pingAfterMilliseconds: 100)
        let connections = (1...4).map { connection(UInt64($0)) }
        for (index, connection) in connections.enumerated() { idle.heard(connection, at: UInt64(index)) }
        idle.heard(connections[3], at: 10)  // the back, staying there
        idle.heard(connections[0], at: 11)  // the head
        idle.heard(connections[2], at: 12)  // the middle
        idle.heard(connections[2], at: 13)  // the back again
        #expect(idle.count == 4)
        #expect(idle.nextDeadline == 101, "2, heard at 1, is first now")
        #expect(idle.expire(at: 111).ping.map(\.id) == [2, 4, 1])
        #expect(idle.nextDeadline == 113)
        #expect(idle.expire(at: 113).ping.map(\.id) == [3])
        #expect(idle.count == 4, "pinged, not forgotten")
    }

    @Test func theListsHoldTenThousandConnectionsInOrderAtConstantCostPerFrame() {
        let idle = IdleDetector(pingAfterMilliseconds: 10_000)
        let connections = (1...10_000).map { connection(UInt64($0)) }
        for (index, connection) in connections.enumerated() { idle.heard(connection, at: UInt64(index)) }
        // Every even connection speaks again, in reverse order.
        for connection in connections.reversed() where connection.id % 2 == 0 { idle.heard(connection, at: 15_000) }
        let expired = idle.expire(at: 19_999)
        #expect(expired.ping.map(\.id) == connections.filter { $0.id % 2 == 1 }.map(\.id))
        #expect(expired.unresponsive.isEmpty)
        #expect(idle.nextDeadline == 20_000, "the first pinged connection's close")
    }
}
