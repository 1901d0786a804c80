/// How many of a user's scenes are in each activation state, kept up to date as scenes move,
/// so the user's app state is known without looking at every scene.
struct StateCounts: Sendable {
    /// One count for each state, at its rank (`ActivationState.rank`): no array to allocate,
    /// and `highest` reads from the top down without sorting the states.
    private var unattached = 0
    private var background = 0
    private var foregroundInactive = 0
    private var foregroundActive = 0

    mutating func add(_ state: ActivationState) { self[state] += 1 }
    mutating func remove(_ state: ActivationState) { self[state] -= 1 }

    /// The highest state any scene is in: the app state.
    var highest: ActivationState? {
        if foregroundActive > 0 { return .foregroundActive }
        if foregroundInactive > 0 { return .foregroundInactive }
        if background > 0 { return .background }
        if unattached > 0 { return .unattached }
        return nil
    }

    private subscript(state: ActivationState) -> Int {
        get {
            switch state {
            case .unattached: unattached
            case .background: background
            case .foregroundInactive: foregroundInactive
            case .foregroundActive: foregroundActive
            }
        }
        set {
            switch state {
            case .unattached: unattached = newValue
            case .background: background = newValue
            case .foregroundInactive: foregroundInactive = newValue
            case .foregroundActive: foregroundActive = newValue
            }
        }
    }
}
