/// The scenes showing the switcher (`listSessions` with `watch`), per user: they hear
/// `sessionsChanged` whenever the user's list changes (`Hub.sessionsChanged(for:)`).
struct SwitcherWatchers: Sendable {
    private var watchers: [OwnerKey: Set<SceneID>] = [:]

    /// The scene hears of changes to its user's list from now on.
    mutating func watch(_ scene: SceneID, of owner: OwnerKey) {
        watchers[owner, default: []].insert(scene)
    }

    /// The scene no longer hears of changes (it asked, or it ended).
    mutating func unwatch(_ scene: SceneID, of owner: OwnerKey) {
        watchers[owner]?.remove(scene)
        if watchers[owner]?.isEmpty == true { watchers[owner] = nil }
    }

    /// The scenes watching the user's list; empty when none does.
    func scenes(of owner: OwnerKey) -> Set<SceneID> {
        watchers[owner] ?? []
    }
}
