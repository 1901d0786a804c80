@testable import PanesCore
import Testing

/// A user's scenes counted by state: the app state is the highest state counted, whatever
/// the mix (checked against `ActivationState`'s own order for every pair of states).
@Suite struct StateCountsTests {
    @Test func theHighestCountedStateIsTheMaximumOfTheStatesAdded() {
        #expect(Self.isEmpty(StateCounts()))
        for a in ActivationState.allCases {
            for b in ActivationState.allCases {
                var counts = StateCounts()
                counts.add(a)
                counts.add(b)
                #expect(counts.highest == max(a, b), "\(a) and \(b)")
                counts.remove(max(a, b))
                #expect(counts.highest == min(a, b), "\(a) and \(b), the higher removed")
                counts.remove(min(a, b))
                #expect(Self.isEmpty(counts), "\(a) and \(b), both removed")
            }
        }
    }

    /// Every count back to zero, read through what the hub reads: nothing counted (`highest` is
    /// nil, so no count is above zero), and no count below zero (one scene added in any state is
    /// then the highest).
    private static func isEmpty(_ counts: StateCounts) -> Bool {
        counts.highest == nil && ActivationState.allCases.allSatisfy { state in
            var one = counts
            one.add(state)
            return one.highest == state
        }
    }
}
