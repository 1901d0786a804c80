/// Session records across nodes: the newest write wins everywhere. Any node may write a
/// session that is not live (a refresh, a discard of a document it showed), and the node that
/// held it last may still have an older copy, which it writes again when the window comes
/// back there. Each write counts one more than the copy it was made from (`revision`); a shared
/// store keeps a write only over an older revision, and a node takes a copy read from the
/// store only when it is not older than its own. So a write from an older copy is dropped by
/// the store, and the node that made it takes the newer one in when it reads the records.
///
/// A session live here is written by this node alone, except for a write another node made
/// before it knew (a refresh racing the window's resume): its switcher fields are taken in,
/// the window told (`sessionRefreshed`) and the whole written again on top.
extension Hub {
    /// Counts each session write of a cluster node on from the newest copy this node knows.
    mutating func counted(_ commands: [StoreCommand]) -> [StoreCommand] {
        guard isClustered else { return commands }
        return commands.map { command in
            switch command {
            case .putSession(var session):
                session.revision = max(cluster.revisions[session.id] ?? 0, session.revision) + 1
                cluster.revisions[session.id] = session.revision
                sessions[session.id]?.revision = session.revision
                return .putSession(session)
            case .deleteSession(let id):
                cluster.revisions[id] = nil
                return command
            default:
                return command
            }
        }
    }

    /// Whether a copy read from the store is at least as new as this node's own.
    func isCurrent(_ read: SceneSession) -> Bool {
        read.revision >= (cluster.revisions[read.id] ?? 0)
    }

    /// A newer copy of a session live here, written by another node: its switcher fields
    /// (those a refresh sets) are taken in, everything the live window owns is kept, and the
    /// result is written on top so the store holds both.
    /// - Returns: whether the switcher's entry changed.
    mutating func takeWhileLive(_ read: SceneSession) -> Bool {
        guard var session = sessions[read.id] else { return false }
        var same = read
        same.revision = session.revision
        cluster.revisions[read.id] = max(cluster.revisions[read.id] ?? 0, read.revision)
        guard same != session else { return false }
        let restored = session.restoration != read.restoration
        let changed = session.title != read.title || session.subtitle != read.subtitle
            || session.snapshot != read.snapshot || restored
        session.title = read.title
        session.subtitle = read.subtitle
        session.snapshot = read.snapshot
        session.restoration = read.restoration
        store(session)
        if changed, let live = liveScenes[read.id].flatMap({ scenes[$0] }) {
            send(.event(.sessionRefreshed(sessionSummary(session), activity: restored ? session.restoration?.activity.json : nil,
                                          requester: .null)), to: live.connection)
        }
        return changed
    }
}
