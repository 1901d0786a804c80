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

    /// The owner, name and client version the user's scenes share (`add`): the last attached
    /// scene's, or the one before it held the same bytes.
    private(set) var user: SceneUser?

    /// A scene attached in `slot` with `user` (its own). Returns the `SceneUser` the scene
    /// should hold: the one kept here when it holds the same bytes, else `user`, kept from now.
    mutating func add(_ slot: DenseTable<SceneID, Scene>.Slot, in state: ActivationState,
                      user: SceneUser) -> SceneUser {
        slots.insert(slot)
        counts.add(state)
        if let kept = self.user, kept.holdsTheSame(as: user) { return kept }
        self.user = user
        return user
    }

    mutating func remove(_ slot: DenseTable<SceneID, Scene>.Slot, in state: ActivationState) {
        guard slots.remove(slot) != nil else { return }
        counts.remove(state)
    }

    /// No scene and an app state settled to "not running": the entry can go.
    var isUnused: Bool { slots.isEmpty && appState == nil }
}
