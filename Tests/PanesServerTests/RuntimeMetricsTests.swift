import PanesCore
@testable import PanesServer
import Testing

/// Request timing per connection: one request at a time (the common case) and several in
/// flight, answered in any order, each timed once.
@Suite struct RuntimeMetricsTests {
    @Test func oneRequestAtATimeIsTimedOnceAndForgotten() {
        var metrics = RuntimeMetrics()
        metrics.received(.int(1), type: "ping", on: 7, at: 0)
        metrics.replied(.int(1), on: 7)
        metrics.replied(.int(1), on: 7)  // a second reply to the same request times nothing
        #expect(metrics.acks["ping"]?.count == 1)
    }

    @Test func requestsInFlightTogetherAreEachTimedWhateverTheOrderOfTheirReplies() {
        var metrics = RuntimeMetrics()
        metrics.received(.int(1), type: "ping", on: 7, at: 0)
        metrics.received(.int(2), type: "setUserInfo", on: 7, at: 0)
        metrics.received(.int(3), type: "ping", on: 7, at: 0)
        metrics.received(.int(1), type: "ping", on: 8, at: 0)
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
        metrics.received(.int(1), type: "nonsense", on: 7, at: 0)
        metrics.received(.int(2), type: "connect", on: 7, at: 0)
        metrics.replied(.int(1), on: 7)
        #expect(metrics.connects.count == 0)
        metrics.replied(.int(2), on: 7)
        #expect(metrics.connects.count == 1)
        #expect(metrics.acks["connect"]?.count == 1 && metrics.acks["(invalid)"]?.count == 1)
        metrics.received(.int(3), type: "connect", on: 7, at: 0)
        metrics.replied(.int(3), on: 7)
        #expect(metrics.connects.count == 1)  // timed from the opening once
        #expect(metrics.acks["connect"]?.count == 2)
        metrics.opened(8)
        metrics.closed(8)
        metrics.received(.int(1), type: "connect", on: 8, at: 0)
        metrics.replied(.int(1), on: 8)
        #expect(metrics.connects.count == 1)  // closed: its opening is forgotten
        #expect(Set(metrics.acks.keys) == ["connect", "(invalid)"])
    }

    @Test func aClosedConnectionsRequestsAreNotTimed() {
        var metrics = RuntimeMetrics()
        metrics.received(.int(1), type: "ping", on: 7, at: 0)
        metrics.received(.int(2), type: "ping", on: 7, at: 0)
        metrics.closed(7)
        metrics.replied(.int(1), on: 7)
        metrics.replied(.int(2), on: 7)
        #expect(metrics.acks["ping"] == nil)
    }
}

extension RuntimeMetrics {
    /// A request received under its wire name, as the hub hands it over (`Hub.takeReceivedRequest`:
    /// the type's index in `Hub.requestTypes`, nil for a name that is none of them).
    mutating func received(_ id: RequestID, type: String, on connection: UInt64, at time: UInt64) {
        received(id, typeIndex: Hub.requestTypes.firstIndex(of: type), on: connection, at: time)
    }
}
