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

    /// The owner, name and client version the user's scenes share (`attach`): the last attached
    /// scene's, or the one before it held the same bytes.
    private(set) var user: SceneUser?

    /// Attaches a scene of this owner: `make` builds it around the `SceneUser` it is to hold
    /// (the one kept here when that holds `name` and `clientVersion` by bytes, else a new one,
    /// kept from now), it is put in `table`, and its slot is counted here. A scene made with a
    /// user of its own, then handed the shared one, allocated and freed one a resume (issue 27).
    /// - Parameters:
    ///   - table: `Scenes`' table of scenes, passed in: it is changed while this entry is.
    ///   - settling: then settle the app state (`settle`), its change in `change`.
    /// - Returns: the scene's slot in `table`, and the scene.
    mutating func attach(owner: OwnerKey, name: String, clientVersion: String, into table: inout DenseTable<SceneID, Scene>,
                         settling: Bool, change: inout AppStateChange?,
                         _ make: (SceneUser) -> Scene) -> (slot: DenseTable<SceneID, Scene>.Slot, scene: Scene) {
        // The entry is its owner's (`Scenes.byOwner`, keyed by the owner's bytes), so the owner
        // needs no comparing.
        let shared: SceneUser
        if let kept = user, kept.holds(name: name, clientVersion: clientVersion) {
            shared = kept
        } else {
            shared = SceneUser(owner: owner, name: name, clientVersion: clientVersion)
            user = shared
        }
        let scene = make(shared)
        assert(scene.user === shared, "a scene holds the user it was made with")
        let slot = table.put(scene).slot
        slots.insert(slot)
        counts.add(scene.state)
        if settling { change = settle() }
        return (slot, scene)
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
