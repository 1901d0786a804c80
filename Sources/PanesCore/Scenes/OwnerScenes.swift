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
    /// - Parameter settling: then settle the app state (`settle`), its change in `change`.
    mutating func add(_ slot: DenseTable<SceneID, Scene>.Slot, in state: ActivationState,
                      user: SceneUser, settling: Bool, change: inout AppStateChange?) -> SceneUser {
        slots.insert(slot)
        counts.add(state)
        if settling { change = settle() }
        // The entry is its owner's (`Scenes.byOwner`, keyed by the owner's bytes), so the owner
        // needs no comparing.
        if let kept = self.user, kept.holdsTheSame(asOneOfItsOwner: user) { return kept }
        self.user = user
        return user
    }

    mutating func remove(_ slot: DenseTable<SceneID, Scene>.Slot, in state: ActivationState) {
        guard slots.remove(slot) != nil else { return }
        counts.remove(state)
    }

    /// Brings the app state up to date with the counts. Returns the change; nil when there is none.
    mutating func settle() -> AppStateChange? {
        let state = counts.highest
        guard appState != state else { return nil }
        defer { appState = state }
        return AppStateChange(from: appState, to: state)
    }

    /// No scene and an app state settled to "not running": the entry can go.
    var isUnused: Bool { slots.isEmpty && appState == nil }
}

/// A user's app state as it changed (`OwnerScenes.settle`): nil is "not running".
struct AppStateChange: Equatable {
    var from: ActivationState?
    var to: ActivationState?
}
