import Logging

/// What this node reads of the records other nodes write (sessions, claims, document records
/// and access) through `SharedStore.loadRecordChanges`, one load at a time, in record
/// sequence order: taken in, and the switchers and document lists of this node's scenes told.
/// Connects, refreshes and opens that waited for a load go on once it has finished.
extension Hub {
    mutating func loadRecordChanges() {
        guard !cluster.recordsLoading, cluster.recordRetryAt == nil else {
            cluster.recordsWanted = true
            return
        }
        cluster.recordsLoading = true
        cluster.recordLoadsStarted += 1
        cluster.recordLoadInFlight = cluster.recordLoadsStarted
        effects.append(.load(.recordChanges(after: cluster.recordCursor)))
    }

    /// A record load that waited out its backoff starts now, if one is still wanted.
    mutating func retryRecordLoad(now: Millis) {
        guard let at = cluster.recordRetryAt, at <= now else { return }
        cluster.recordRetryAt = nil
        if cluster.recordsWanted {
            cluster.recordsWanted = false
            loadRecordChanges()
        }
    }

    /// Sessions, claims and document records other nodes wrote: taken in, and the switchers
    /// and document lists of this node's scenes told.
    mutating func recordChangesLoaded(_ changes: RecordChanges?, failure: String?) {
        cluster.recordsLoading = false
        // This read's number, taken before the next read (if wanted) is started below.
        let finished = cluster.recordLoadInFlight
        defer { recordLoadFinished(finished, failure: failure) }
        // Sessions written here since the load was asked for: our copies are newer than its. A
        // failed load's notes go too: the next load is asked for after those writes.
        let writtenMeanwhile = cluster.writtenDuringRecordLoad
        cluster.writtenDuringRecordLoad = []
        guard let changes, failure == nil else {
            // Tried again after a backoff, not at once: a store that is away fails a read in
            // microseconds, and an immediate retry made a node read (and log) ~21,000 times a
            // second through an outage.
            let delay = cluster.readBackoff.failed()
            cluster.recordRetryAt = monotonic() + delay
            logLimited(.error, "reading other nodes' changes failed",
                       metadata: ["error": "\(failure ?? "?")", "retryInMs": "\(delay)"])
            cluster.recordsWanted = true
            return
        }
        cluster.readBackoff.succeeded()
        // Deleted here while the load was in flight: the read was made before the deletion (a
        // session id is never used again); taking its copy would bring it back on this node
        // until the next read, and taking its claim would keep an entry nothing removes.
        func deletedMeanwhile(_ id: SessionID) -> Bool { writtenMeanwhile.contains(id) && sessions[id] == nil }
        guard changes.cursor > cluster.recordCursor else { return }
        cluster.recordCursor = changes.cursor
        var owners: Set<OwnerKey> = []
        for (id, claim) in changes.claims where claim.epoch >= (cluster.claims[id]?.epoch ?? 0)
            && !(writtenMeanwhile.contains(id) && claim.node == node) && !deletedMeanwhile(id) {
            // Who holds a session is part of its switcher entry (live elsewhere or not).
            if cluster.claims[id]?.node != claim.node, let owner = sessions[id]?.owner { owners.insert(owner) }
            cluster.claims[id] = claim
            // A connect here lost the claim to another node: now that it is known, ask it.
            askHolder(id)
        }
        for session in changes.sessions {
            // A copy older than this node's own last write (read before that write was in) is
            // not taken; a newer one written while the window is live here is merged in.
            guard isCurrent(session) else { continue }
            if deletedMeanwhile(session.id) { continue }
            if take(session) != nil { owners.insert(session.owner) }
            // A connect waiting for another node to let go of this session can go on.
            if cluster.claims[session.id]?.node == nil { resolvePendingConnects(of: session.id) }
        }
        for id in changes.deletedSessions {
            // A session this node no longer has keeps no claim either; one it has loses its
            // claim in `discard` (`sessionDiscarded`).
            guard sessions[id] != nil else {
                forgetClaim(of: id)
                continue
            }
            forgetRevisions(of: id)
            discard(id, animation: .standard, reason: "discarded on another node", persisted: true)
        }
        for record in changes.documents { takeRemoteRecord(record) }
        for id in changes.deletedDocuments { forgetRemotelyDeleted(id) }
        for (id, access) in changes.access.sorted(by: { $0.key < $1.key }) { takeRemoteAccess(id, access) }
        for owner in owners.sorted() { sessionsChanged(for: owner) }
    }

    /// What waited for record load number `finished` goes on: the next load if one is wanted,
    /// then the connects, refreshes, opens and takeovers that waited for it.
    private mutating func recordLoadFinished(_ finished: Int, failure: String?) {
        if cluster.recordsWanted {
            cluster.recordsWanted = false
            loadRecordChanges()
        }
        // Connects that waited for this read: it has what was committed before they came.
        let ready = cluster.recordWaiters.filter { $0.after < finished }
        cluster.recordWaiters.removeAll { $0.after < finished }
        for entry in ready {
            guard failure != nil, connections.isOpen(entry.waiter.connection) else {
                retryConnect(entry.waiter, afterRecords: true)
                continue
            }
            // The read that was to find the session failed: not knowing it is no reason to
            // say it does not exist (the client would start over, a new session).
            connections.setPhase(.awaitingConnect, of: entry.waiter.connection)
            fail(entry.waiter.requestID, request: "connect", PanesError(
                .storageFailed, "the session could not be read from the store; retry",
                retryAfterMs: Int(cluster.readBackoff.currentMs ?? Backoff.sharedStore.minMs)),
                 to: entry.waiter.connection)
        }
        retryRefreshes(after: finished)
        // Before the opens: one waiting for the record gets the presence that came before it.
        if failure == nil { settleUnreadPresence(readBy: finished) }
        retryOpens(records: finished)
        // Only on a read that succeeded: the holder's last writes must be in.
        if failure == nil {
            cluster.recordsReadThrough = max(cluster.recordsReadThrough, finished)
            claimsLeftBehind(readBy: finished)
        }
        resumeTakeovers(readFailed: failure)
    }

    /// A document record created or renamed on another node.
    mutating func takeRemoteRecord(_ record: DocumentRecord) {
        let isOpen = documents.open[record.id] != nil
        let renamed = documents.updateRecord(record.id) { held -> Bool in
            let renamed = held.title != record.title
            held.title = record.title
            if !isOpen {
                held.revision = max(held.revision, record.revision)
                held.length = record.length
                held.modifiedAt = max(held.modifiedAt, record.modifiedAt)
            }
            return renamed
        }
        guard let renamed else {
            documents.insert(record)
            announce(.created, record.id, workspace: record.workspace)
            return
        }
        if renamed { announce(.renamed, record.id, workspace: record.workspace) }
    }

    /// A document another node deleted: its scenes here are told, its edits and opens waiting
    /// here fail, and the list observers hear of it. The deleting node rewrote the sessions
    /// that referred to it; those rewrites arrive as session records.
    mutating func forgetRemotelyDeleted(_ id: DocumentID) {
        guard let record = documents.records[id] else { return }
        let removed = takeOut(id, record)
        broadcast(.event(.documentDeleted(id, by: .null)),
                  to: removed.holders.compactMap { scenes[$0]?.connection }.sorted())
        failWaiting(on: removed)
        announce(.deleted, id, workspace: record.workspace, summary: removed.summary, by: .null, record: record)
        rights.remove(id)
    }

    /// A read of the store failed: how long to wait before reading again (the shared read
    /// backoff, which grows while the store stays away). Asked only after reads only a cluster
    /// makes (record loads, `recordsRead`).
    mutating func readFailed() -> Millis {
        cluster.readBackoff.failed()
    }
}
