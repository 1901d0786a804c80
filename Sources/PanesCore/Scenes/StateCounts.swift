/// How many of a user's scenes are in each activation state, kept up to date as scenes move,
/// so the user's app state is known without looking at every scene.
struct StateCounts: Sendable {
    private var counts = [Int](repeating: 0, count: ActivationState.allCases.count)

    mutating func add(_ state: ActivationState) { counts[Self.index(state)] += 1 }
    mutating func remove(_ state: ActivationState) { counts[Self.index(state)] -= 1 }

    var isEmpty: Bool { counts.allSatisfy { $0 == 0 } }

    /// The highest state any scene is in: the app state.
    var highest: ActivationState? {
        ActivationState.allCases.sorted(by: >).first { counts[Self.index($0)] > 0 }
    }

    private static func index(_ state: ActivationState) -> Int {
        ActivationState.allCases.firstIndex(of: state)!
    }
}
