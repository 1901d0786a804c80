import PanesCore
@testable import PanesServer
import Testing

/// Request timing per connection: one request at a time (the common case) and several in
/// flight, answered in any order, each timed once.
@Suite struct RuntimeMetricsTests {
    private func request(_ type: String, _ id: Int64) -> JSONValue {
        ["type": .string(type), "id": .int(id)]
    }

    @Test func oneRequestAtATimeIsTimedOnceAndForgotten() {
        var metrics = RuntimeMetrics()
        metrics.received(request("ping", 1), on: 7, at: 0)
        metrics.replied(.int(1), on: 7)
        metrics.replied(.int(1), on: 7)  // a second reply to the same request times nothing
        #expect(metrics.acks["ping"]?.count == 1)
    }

    @Test func requestsInFlightTogetherAreEachTimedWhateverTheOrderOfTheirReplies() {
        var metrics = RuntimeMetrics()
        metrics.received(request("ping", 1), on: 7, at: 0)
        metrics.received(request("setUserInfo", 2), on: 7, at: 0)
        metrics.received(request("ping", 3), on: 7, at: 0)
        metrics.received(request("ping", 1), on: 8, at: 0)
        metrics.replied(.int(2), on: 7)
        metrics.replied(.int(9), on: 7)  // never asked: nothing
        metrics.replied(.int(3), on: 7)
        metrics.replied(.int(1), on: 7)
        metrics.replied(.int(1), on: 7)
        #expect(metrics.acks["ping"]?.count == 2)
        #expect(metrics.acks["setUserInfo"]?.count == 1)
        metrics.replied(.int(1), on: 8)
        #expect(metrics.acks["ping"]?.count == 3)
    }

    /// A connection is timed from opening to its `connect`'s reply, once, whatever else it sent
    /// meanwhile; an unknown request type is counted as `(invalid)`.
    @Test func aConnectIsTimedFromTheOpeningOfItsConnection() {
        var metrics = RuntimeMetrics()
        metrics.opened(7)
        metrics.received(request("nonsense", 1), on: 7, at: 0)
        metrics.received(request("connect", 2), on: 7, at: 0)
        metrics.replied(.int(1), on: 7)
        #expect(metrics.connects.count == 0)
        metrics.replied(.int(2), on: 7)
        #expect(metrics.connects.count == 1)
        #expect(metrics.acks["connect"]?.count == 1 && metrics.acks["(invalid)"]?.count == 1)
        metrics.received(request("connect", 3), on: 7, at: 0)
        metrics.replied(.int(3), on: 7)
        #expect(metrics.connects.count == 1)  // timed from the opening once
        #expect(metrics.acks["connect"]?.count == 2)
        metrics.opened(8)
        metrics.closed(8)
        metrics.received(request("connect", 1), on: 8, at: 0)
        metrics.replied(.int(1), on: 8)
        #expect(metrics.connects.count == 1)  // closed: its opening is forgotten
        #expect(Set(metrics.acks.keys) == ["connect", "(invalid)"])
    }

    @Test func aClosedConnectionsRequestsAreNotTimed() {
        var metrics = RuntimeMetrics()
        metrics.received(request("ping", 1), on: 7, at: 0)
        metrics.received(request("ping", 2), on: 7, at: 0)
        metrics.closed(7)
        metrics.replied(.int(1), on: 7)
        metrics.replied(.int(2), on: 7)
        #expect(metrics.acks["ping"] == nil)
    }
}
