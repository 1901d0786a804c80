@testable import PanesCore
import Testing

/// Lifecycle callbacks counted by event: every event has a counter of its own.
@Suite struct LifecycleCountsTests {
    @Test func eachEventIsCountedOnItsOwn() {
        var counts = LifecycleCounts()
        for (times, event) in LifecycleEvent.allCases.enumerated() {
            for _ in 0...times { counts[event] += 1 }
        }
        #expect(LifecycleEvent.allCases.enumerated().allSatisfy { counts[$0.element] == $0.offset + 1 })
    }
}
