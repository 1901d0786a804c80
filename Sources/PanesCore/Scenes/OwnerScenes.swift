/// One user's live scenes on this node (`Scenes`): their ids, how many are in each activation
/// state, and the app state as last settled.
struct OwnerScenes: Sendable {
    private(set) var ids: Set<SceneID> = []
    /// The states of the scenes in `ids`, counted (`Scenes.update` moves a count in place).
    var counts = StateCounts()
    /// The app state as last settled (`Scenes.settleAppState`); nil: not running.
    var appState: ActivationState?

    mutating func add(_ id: SceneID, in state: ActivationState) {
        ids.insert(id)
        counts.add(state)
    }

    mutating func remove(_ id: SceneID, in state: ActivationState) {
        guard ids.remove(id) != nil else { return }
        counts.remove(state)
    }

    /// No scene and an app state settled to "not running": the entry can go.
    var isUnused: Bool { ids.isEmpty && appState == nil }
}
