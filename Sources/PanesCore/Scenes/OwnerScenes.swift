/// One user's live scenes on this node (`Scenes`): their slots in the scenes' table, how many
/// are in each activation state, and the app state as last settled.
struct OwnerScenes: Sendable {
    /// Slots of `Scenes`' table (`DenseTable.Slot`), not scene ids: 4 bytes an entry instead
    /// of a 16-byte string (every idle scene has one).
    private(set) var slots: Set<DenseTable<SceneID, Scene>.Slot> = []
    /// The states of the scenes in `slots`, counted (`Scenes.update` moves a count in place).
    var counts = StateCounts()
    /// The app state as last settled (`Scenes.settleAppState`); nil: not running.
    var appState: ActivationState?

    mutating func add(_ slot: DenseTable<SceneID, Scene>.Slot, in state: ActivationState) {
        slots.insert(slot)
        counts.add(state)
    }

    mutating func remove(_ slot: DenseTable<SceneID, Scene>.Slot, in state: ActivationState) {
        guard slots.remove(slot) != nil else { return }
        counts.remove(state)
    }

    /// No scene and an app state settled to "not running": the entry can go.
    var isUnused: Bool { slots.isEmpty && appState == nil }
}
