import Logging

/// Session records across nodes: the newest write wins everywhere. Any node may write a
/// session that is not live (a refresh, a discard of a document it showed), and the node that
/// held it last may still have an older copy, which it writes again when the window comes
/// back there. Each write counts one more than the copy it was made from (`revision`); a shared
/// store keeps a write only over an older revision, and a node takes a copy read from the
/// store only when it is not older than its own. So a write from an older copy is dropped by
/// the store, and the node that made it takes the newer one in when it reads the records.
///
/// A write that must not be lost, a refresh of a session live nowhere, is a compare-and-set on
/// the record's revision (`Channel.sessionRecord`): when another node wrote the record first,
/// the refresh is made again on the copy read after it.
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

    /// Writes a refresh of a session live nowhere, at the revision this node holds.
    mutating func commitRefresh(_ session: SceneSession, _ request: RefreshRequest, context: RequestContext, attempt: Int) {
        let base = max(cluster.revisions[session.id] ?? 0, session.revision)
        var written = session
        written.revision = base + 1
        let id = commits.makeID()
        commits.pending[id] = .refresh(written, RefreshRetry(request: request, context: context, attempt: attempt))
        effects.append(.commit(Commit(id: id, channel: .sessionRecord(session.id), base: base,
                                      commands: [.putSession(written)])))
    }

    mutating func refreshCommitted(_ written: SceneSession, _ retry: RefreshRetry, _ outcome: CommitOutcome) {
        let context = retry.context
        switch outcome {
        case .committed:
            guard sessions[written.id] != nil else { return }
            // What this node wrote is the newest copy now, whatever it held meanwhile.
            sessions[written.id] = written
            cluster.revisions[written.id] = max(cluster.revisions[written.id] ?? 0, written.revision)
            let entry = sessionSummary(written)
            if scenes[context.scene] != nil { send(.reply(context.id, result: ["session": entry]), to: context.connection) }
            sessionsChanged(for: written.owner)
        case .conflict where retry.attempt < 3:
            // Another node wrote the record first: read it, then make the refresh again on it.
            cluster.refreshWaiters.append((cluster.recordLoadsStarted, retry))
            if cluster.recordsLoading { cluster.recordsWanted = true } else { loadRecordChanges() }
        case .conflict:
            fail(context.id, request: RefreshRequest.type,
                 PanesError(.storageFailed, "the session kept changing on other nodes; retry", retryAfterMs: 100),
                 to: context.connection)
        case .failed(let reason):
            logger.error("a refresh could not be stored", metadata: ["session": "\(written.id)", "reason": "\(reason)"])
            fail(context.id, request: RefreshRequest.type,
                 PanesError(.storageFailed, "the refresh could not be stored; retry", retryAfterMs: 1_000),
                 to: context.connection)
        }
    }

    /// Makes again the refreshes that waited for a record load that has now finished.
    mutating func retryRefreshes(after finished: Int) {
        guard !cluster.refreshWaiters.isEmpty else { return }
        let ready = cluster.refreshWaiters.filter { $0.after < finished }
        cluster.refreshWaiters.removeAll { $0.after < finished }
        for entry in ready {
            let retry = entry.retry
            guard let scene = scenes[retry.context.scene] else { continue }
            do throws(PanesError) {
                if let result = try requestRefresh(retry.request, from: scene, context: retry.context,
                                                   attempt: retry.attempt + 1) {
                    send(.reply(retry.context.id, result: result), to: retry.context.connection)
                }
            } catch {
                fail(retry.context.id, request: RefreshRequest.type, error, to: retry.context.connection)
            }
        }
    }
}

/// A refresh waiting for its compare-and-set, and how to make it again.
struct RefreshRetry: Sendable {
    let request: RefreshRequest
    let context: RequestContext
    let attempt: Int
}
