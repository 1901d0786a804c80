@testable import PanesServer
import Testing

/// The one rule output waits by: after every persist given before it, in order; an answer
/// that says nothing was applied waits only for what its own connection has held.
@Suite struct DurabilityGateTests {
    @Test func outputWaitsForEveryPersistBeforeItAndLeavesInOrder() {
        var gate = DurabilityGate<String>()
        #expect(gate.pass("before", to: [1]) == "before", "nothing pending: out at once")
        let first = gate.persistSubmitted()
        #expect(gate.pass("ack 1", to: [1]) == nil)
        let second = gate.persistSubmitted()
        #expect(gate.pass("ack 2", to: [2]) == nil)
        #expect(gate.heldCount == 2)
        #expect(gate.becameDurable(first).map(\.output) == ["ack 1"])
        #expect(gate.pass("event", to: [1]) == nil, "still behind the second persist")
        #expect(gate.becameDurable(second).map(\.output) == ["ack 2", "event"])
        #expect(gate.isClear)
    }

    @Test func anUnappliedAnswerWaitsOnlyForItsOwnConnectionsHeldOutput() {
        var gate = DurabilityGate<String>()
        let persist = gate.persistSubmitted()
        #expect(gate.pass("ack to 1", to: [1]) == nil)
        #expect(gate.passUnapplied("storage_failed to 2", to: [2]) == "storage_failed to 2",
                "connection 2 has nothing held: it is not kept behind connection 1's write")
        #expect(gate.passUnapplied("storage_failed to 1", to: [1]) == nil, "connection 1 reads its answers in order")
        #expect(gate.heldCount(for: 1) == 2)
        #expect(gate.becameDurable(persist).map(\.output) == ["ack to 1", "storage_failed to 1"])
        #expect(gate.heldCount(for: 1) == 0)
    }

    @Test func droppingEverythingCountsEveryPersistDurable() {
        var gate = DurabilityGate<String>()
        _ = gate.persistSubmitted()
        #expect(gate.pass("never sent", to: [1]) == nil)
        gate.dropAll()
        #expect(gate.isClear)
        #expect(gate.heldCount(for: 1) == 0)
        #expect(gate.pass("after", to: [1]) == "after")
    }
}
