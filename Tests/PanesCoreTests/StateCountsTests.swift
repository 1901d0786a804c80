@testable import PanesCore
import Testing

/// A user's scenes counted by state: the app state is the highest state counted, whatever
/// the mix (checked against `ActivationState`'s own order for every pair of states).
@Suite struct StateCountsTests {
    @Test func theHighestCountedStateIsTheMaximumOfTheStatesAdded() {
        #expect(StateCounts().highest == nil && StateCounts().isEmpty)
        for a in ActivationState.allCases {
            for b in ActivationState.allCases {
                var counts = StateCounts()
                counts.add(a)
                counts.add(b)
                #expect(counts.highest == max(a, b), "\(a) and \(b)")
                counts.remove(max(a, b))
                #expect(counts.highest == min(a, b), "\(a) and \(b), the higher removed")
                counts.remove(min(a, b))
                #expect(counts.isEmpty && counts.highest == nil)
            }
        }
    }
}
