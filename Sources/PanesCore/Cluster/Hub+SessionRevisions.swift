import Logging

/// Session records across nodes: the newest write wins everywhere. Any node may write a
/// session that is not live (a refresh, a discard of a document it showed), and the node that
/// held it last may still have an older copy, which it writes again when the window comes
/// back there. Each write counts one more than the copy it was made from (`revision`); a shared
/// store keeps a write only over an older revision, and a node takes a copy read from the
/// store only when it is not older than its own. So a write from an older copy is dropped by
/// the store, and the node that made it takes the newer one in when it reads the records.
///
/// Two writes made from the same copy on two nodes (the same revision) are both "newest": the
/// store keeps the first, and the node whose write was dropped merges the two, field by field
/// against the copy both were made from (what it changed stays, the rest is taken), and
/// writes the result on top. A window resuming from an older copy while another node refreshed
/// the session keeps its own fields and takes the refresh in, and is told (`sessionRefreshed`)
/// when its restoration activity was replaced.
///
/// A write that must not be lost, a refresh of a session live nowhere, is a compare-and-set on
/// the record's revision (`CoordinationChannel.sessionRecord`): when another node wrote the
/// record first, the refresh is made again on the copy read after it.
extension Hub {
    /// Counts each session write of a cluster node on from the newest copy this node knows.
    mutating func countedRevisions(_ commands: [StoreCommand]) -> [StoreCommand] {
        commands.map { command in
            switch command {
            case .putSession(var session):
                session.revision = max(storedRevision(of: session.id), session.revision) + 1
                wrote(session)
                return .putSession(session)
            case .putSessionLiveness(let liveness):
                // A whole copy, even where only the times changed: each revision is one.
                guard var session = sessions[liveness.id] else { return command }
                session.take(liveness)
                session.revision = max(storedRevision(of: session.id), session.revision) + 1
                wrote(session)
                return .putSession(session)
            case .deleteSession(let id):
                forgetRevisions(of: id)
                return command
            default:
                return command
            }
        }
    }

    /// Notes a write of this node: its revision, its copy, and the copy it was made from.
    mutating func wrote(_ session: SceneSession) {
        cluster.madeFrom[session.id] = cluster.stored[session.id]
        cluster.stored[session.id] = session
        sessions.update(session.id) { $0.revision = session.revision }
    }

    mutating func forgetRevisions(of id: SessionID) {
        cluster.stored[id] = nil
        cluster.madeFrom[id] = nil
    }

    /// The record revision of the newest copy of the session this node knows (0: none).
    func storedRevision(of id: SessionID) -> Int64 {
        cluster.stored[id]?.revision ?? 0
    }

    /// Whether a copy read from the store is at least as new as this node's own.
    func isCurrent(_ read: SceneSession) -> Bool {
        read.revision >= storedRevision(of: read.id)
    }

    /// Takes in a current copy read from the store (`isCurrent`).
    /// - Returns: the session as this node holds it now, nil when the read brought nothing new.
    mutating func take(_ read: SceneSession) -> SceneSession? {
        guard read != cluster.stored[read.id] else { return nil }
        guard let ours = sessions[read.id] else {
            cluster.stored[read.id] = read
            // A session new to this node: indexed by owner and given its idle deadline.
            sessions.put(read)
            return read
        }
        // The same revision as this node's last write, but not that write: it was dropped for
        // one made from the same copy. A newer revision was made on top of this node's copy.
        let tie = read.revision == cluster.stored[read.id]?.revision
        let base = tie ? cluster.madeFrom[read.id] : cluster.stored[read.id]
        var merged = read
        if let base {
            merged = Self.merged(ours, read, base: base)
        } else if scenes.isLive(read.id) {
            // Nothing to tell which side changed what: the live window's own fields stay.
            merged = ours
            (merged.title, merged.subtitle, merged.snapshot, merged.restoration) =
                (read.title, read.subtitle, read.snapshot, read.restoration)
        }
        merged.revision = read.revision
        cluster.stored[read.id] = read
        sessions.put(merged)
        if merged != read { persist(.putSession(merged)) }
        if merged.restoration != ours.restoration, let live = scenes.live(of: read.id) {
            send(.event(.sessionRefreshed(sessionSummary(merged), activity: merged.restoration?.activity.json,
                                          requester: .null)), to: live.connection)
        }
        return merged
    }

    /// Three-way merge: what `ours` changed since `base` stays, everything else is `theirs`.
    static func merged(_ ours: SceneSession, _ theirs: SceneSession, base: SceneSession) -> SceneSession {
        var result = theirs
        func keep<Value: Equatable>(_ field: WritableKeyPath<SceneSession, Value>) {
            if ours[keyPath: field] != base[keyPath: field] { result[keyPath: field] = ours[keyPath: field] }
        }
        keep(\.secretHash)
        keep(\.role)
        keep(\.configuration)
        keep(\.title)
        keep(\.subtitle)
        keep(\.snapshot)
        keep(\.userInfo)
        keep(\.restoration)
        keep(\.lastActiveAt)
        keep(\.failedRestores)
        keep(\.liveSince)
        return result
    }

    /// Writes a refresh of a session live nowhere, at the revision this node holds.
    mutating func commitRefresh(_ session: SceneSession, _ request: RefreshRequest, context: RequestContext, attempt: Int) {
        let base = max(storedRevision(of: session.id), session.revision)
        var written = session
        written.revision = base + 1
        let id = commits.makeID()
        commits.pending[id] = .refresh(written, RefreshRetry(request: request, context: context, attempt: attempt))
        submit(Commit(id: id, channel: .coordination(.sessionRecord(session.id)), base: base,
                      commands: [.putSession(written)]))
    }

    mutating func refreshCommitted(_ written: SceneSession, _ retry: RefreshRetry, _ outcome: CommitOutcome) {
        let context = retry.context
        switch outcome {
        case .committed:
            guard sessions[written.id] != nil else {
                // Deleted on this node since (by a window here, or a deletion read from another
                // node): the store took the refresh first (a deleted record has revision -1,
                // so a refresh after the deletion conflicts). The refresh stands and is
                // answered, so its key records it; the deletion came after it and stays: the
                // session is not put back here, and the store drops writes of a deleted session.
                send(.reply(context.id, result: ["session": sessionSummary(written)]), to: context.connection)
                return
            }
            if !scenes.isLive(written.id) {
                // What this node wrote is the newest copy now, whatever it held meanwhile.
                sessions.put(written)
                wrote(written)
            }
            // (Its window resumed here meanwhile: its write came after this one and was
            // dropped; the record read merges the two.)
            let entry = sessionSummary(sessions[written.id] ?? written)
            // Also when the requester has gone: a retry of it with its key gets this answer.
            send(.reply(context.id, result: ["session": entry]), to: context.connection)
            sessionsChanged(for: written.owner)
        case .unknown:
            // Answered early (`commitOutcomeUnknown`); the real outcome comes later.
            return
        case .conflict where retry.attempt < 3, .behind where retry.attempt < 3, .recorded where retry.attempt < 3:
            // Another node wrote the record first: read it, then make the refresh again on it.
            cluster.refreshWaiters.append((cluster.recordLoadsStarted, retry))
            if cluster.recordsLoading { cluster.recordsWanted = true } else { loadRecordChanges() }
        case .conflict, .behind, .recorded:
            fail(context.id, request: RefreshRequest.type,
                 PanesError(.storageFailed, "the session kept changing on other nodes; retry", retryAfterMs: 100),
                 to: context.connection)
        case .failed(let reason):
            logLimited(.error, "a refresh could not be stored", metadata: ["session": "\(written.id)", "reason": "\(reason)"])
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
            guard let scene = scenes[retry.context.scene] else {
                // Its window has gone: nothing was applied, and nobody waits for the answer but
                // a retry with its key, which is then handled anew.
                abandonKeyed(ReplyRef(connection: retry.context.connection, id: retry.context.id))
                continue
            }
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
