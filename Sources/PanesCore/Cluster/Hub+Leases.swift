import Logging

/// Session leases: who holds each session live, claimed as a compare-and-set on the session's
/// epoch so that of two nodes claiming at once exactly one wins; released when a scene ends
/// here; taken over, with a new epoch, from nodes whose lease ran out.
extension Hub {
    /// Whether another node, still alive, holds the session.
    func claimedElsewhere(_ session: SessionID) -> Bool {
        guard let holder = cluster.claims[session]?.node else { return false }
        return holder != node && !cluster.expired.contains(holder)
    }

    /// Asks the store for the session's lease: a compare-and-set on its epoch, so of two nodes
    /// claiming at once exactly one wins, and the winner's epoch fences the loser's writes.
    mutating func claim(_ session: SessionID, for pending: PendingConnect?) {
        if let pending, takeoverMustWait(session) {
            // Parked without a deadline: the read decides (and fails it, if it cannot be made).
            pendingConnects[session, default: []].append(pending)
            connections.setPhase(.answering(session), of: pending.connection)
            cluster.takeoversWaiting.insert(session)
            return
        }
        let epoch = cluster.claims[session]?.epoch ?? 0
        let claim = SessionClaim(node: node, epoch: epoch + 1)
        let id = commits.makeID()
        commits.pending[id] = .claim(session, claim, pending)
        cluster.claiming.insert(session)
        if let pending { connections.setPhase(.answering(session), of: pending.connection) }
        submit(Commit(id: id, channel: .coordination(.session(session)), base: epoch,
                      commands: [.coordination(.claimSession(session, claim))]))
    }

    /// Lets go of a session whose scene ended here, so a reload on another node resumes it
    /// at once. A release that conflicts lost nothing: someone took the session over already.
    mutating func releaseLease(_ session: SessionID) {
        guard let held = cluster.claims[session], held.node == node,
              !cluster.claiming.contains(session), sessions[session] != nil else { return }
        let released = SessionClaim(node: nil, epoch: held.epoch)
        let id = commits.makeID()
        commits.pending[id] = .claim(session, released, nil)
        submit(Commit(id: id, channel: .coordination(.session(session)), base: held.epoch,
                      commands: [.coordination(.claimSession(session, released))]))
    }

    /// A session gone from this node (discarded here, or read as deleted): its claim goes
    /// with it. A session id is never used again, so nothing asks who holds it after this; a
    /// connect naming it is told `session_not_found`.
    mutating func forgetClaim(of session: SessionID) {
        cluster.claims[session] = nil
        // Its held drops were deleted with it (`StoreCommand.deleteSession`).
        cluster.heldDropsToRead.remove(session)
    }

    mutating func claimCommitted(_ session: SessionID, _ claim: SessionClaim, _ pending: PendingConnect?,
                                 _ outcome: CommitOutcome) {
        if claim.node != nil { cluster.claiming.remove(session) }
        switch outcome {
        case .committed:
            if claim.node == nil { cluster.releaseBackoff.succeeded() }
            // A session discarded while its claim or release was in flight keeps no claim here.
            if claim.epoch >= (cluster.claims[session]?.epoch ?? 0), sessions[session] != nil {
                cluster.claims[session] = claim
            }
            guard let pending else { return }
            // A claim that commits after this node lost its lease attaches nothing: the
            // connection is closed (`refusedWhileLeaseLost`), and the claim let go like any other.
            guard connections.isOpen(pending.connection), sessions[session] != nil,
                  !refusedWhileLeaseLost(pending.connection) else {
                // The connect went away meanwhile (or was told to close): nobody is live on the session.
                abandonKeyed(ReplyRef(connection: pending.connection, id: pending.requestID))
                release(session)
                resolvePendingConnects(of: session)
                return
            }
            if !scenes.isLive(session) {
                // A drop held for the session (its node died, or its window closed, before it
                // was sent) was found by the claim's own write (`heldDropsFound`, handed in before
                // this outcome): the attach reads it after `connected`, on a takeover as on any
                // resume, and nothing more is read when nothing is held.
                attach(pending.connection, requestID: pending.requestID, request: pending.request,
                       identity: pending.identity, session: session, secret: Self.provenSecret(of: pending.request),
                       handedOver: pending.handedOver, created: pending.request.replay?.created ?? false,
                       forkedFrom: pending.request.replay?.forkedFrom)
            } else {
                fork(session, for: pending, reason: .liveWhenClaimed)
            }
            resolvePendingConnects(of: session)
        case .unknown:
            // Answered early (`commitOutcomeUnknown`); the real outcome comes later.
            return
        case .conflict, .behind, .recorded:
            // Another node claimed it first: it is live there, for now. Read who holds it and
            // wait, like any connect for a session live elsewhere.
            guard var pending else { return }
            // Who won is known once the records are read; the holder is asked then (or now, if
            // this node has read it already).
            loadRecordChanges()
            pending.deadline = monotonic() + Millis(settings.nodeLeaseMs + 2 * settings.nodeHeartbeatMs)
            pending.decidingCheck = nil
            if connections.isOpen(pending.connection) {
                wait(pending, for: session)
                askHolder(session)
            }
        case .failed(let reason):
            logLimited(.error, "session claim failed", metadata: ["session": "\(session)", "reason": "\(reason)"])
            // A release that could not be written leaves the session claimed by this node with
            // no scene: a reload through another node would wait for it, then fork.
            if claim.node == nil, pending == nil { releaseFailed(session) }
            guard let pending, connections.isOpen(pending.connection) else { return }
            connections.setPhase(.awaitingConnect, of: pending.connection)
            fail(pending.requestID, request: "connect",
                 PanesError(.storageFailed, "the session could not be claimed; retry", retryAfterMs: 1_000),
                 to: pending.connection)
        }
    }

    /// Other nodes are gone: the sessions they held are free, and connects waiting for them
    /// take them over (with a new epoch, which fences anything the dead node still sends).
    mutating func nodesExpired(_ nodes: [NodeID]) {
        // The nodes expired now: one that renewed late drops out of the set again.
        let current = Set(nodes).subtracting([node].compactMap { $0 })
        let newly = current.subtracting(cluster.expired)
        cluster.expired = current
        cluster.peers.subtract(current)
        guard !newly.isEmpty else { return }
        logger.notice("nodes expired; their sessions can be taken over", metadata: ["nodes": "\(newly.sorted())"])
        // What they wrote before their lease ended is committed (the end waited for it), but
        // perhaps not read here yet: a session of theirs is taken over once it is.
        cluster.goneReadNeeded = readRecordsFromNow()
        dropPresence(of: newly)
        let freed = cluster.claims.filter { $0.value.node.map(newly.contains) == true }.map(\.key)
        for session in freed.sorted() { resolvePendingConnects(of: session) }
        var owners = dropRemoteScenes(of: newly)
        for session in freed { if let owner = sessions[session]?.owner { owners.insert(owner) } }
        for owner in owners.sorted() { sessionsChanged(for: owner) }
    }

    /// This node may no longer hold its sessions: every connection is closed with `nodeLost`,
    /// so its client reconnects (through the load balancer, to a node that can serve it). Not
    /// only scenes: a connection upgraded before the runtime refused upgrades, one whose
    /// `connect` waits on another node or a takeover, and one whose claim is being written
    /// would otherwise attach later, while the database's lease still runs, and stay live here
    /// after another node took the session over. Until `leaseRegained`, nothing attaches
    /// (`refusedWhileLeaseLost`).
    mutating func leaseLost() {
        logger.critical("this node lost its lease; closing every connection so they resume elsewhere")
        cluster.leaseLost = true
        for sceneID in scenes.all.map(\.id).sorted() {
            guard let scene = scenes[sceneID] else { continue }
            close(scene.connection, .nodeLost, reason: Self.leaseLostReason)
            detach(sceneID, abnormal: false)
        }
        for connection in connections.ids where connections.isOpen(connection) {
            close(connection, .nodeLost, reason: Self.leaseLostReason)
        }
    }

    static let leaseLostReason = "this node lost its lease; reconnect"

    /// While this node's lease is lost by its own clock, a connection that would attach is
    /// closed with `nodeLost` instead (as its scene would have been), and true is returned.
    mutating func refusedWhileLeaseLost(_ connection: ConnectionID) -> Bool {
        guard cluster.leaseLost else { return false }
        close(connection, .nodeLost, reason: Self.leaseLostReason)
        return true
    }

    /// This node's identity may no longer serve (its lease has ended) and the runtime gives
    /// this hub up for one built afresh: every connection is closed with `code`, and nothing is
    /// written (the store refuses this identity's writes; the sessions' claims are ended with it).
    /// - Returns: the closes, one per connection.
    public mutating func closeEveryConnection(_ code: CloseCode, reason: String) -> [Effect] {
        for id in connections.ids { close(id, code, reason: reason) }
        defer { effects.removeAll(keepingCapacity: true) }
        return effects
    }

    // MARK: Takeovers

    /// Starts a record load that reads everything committed up to now (after the one in
    /// flight, if any), and returns its number (`ClusterState.recordLoadsStarted`).
    mutating func readRecordsFromNow() -> Int {
        let next = cluster.recordLoadsStarted + 1
        loadRecordChanges()
        return next
    }

    /// Whether taking the session over from its holder, a node found gone, waits for the record
    /// read started when it was found gone: the holder's last writes of the session (a window
    /// writing through it up to the end) are then in, and the window resumes with them.
    func takeoverMustWait(_ session: SessionID) -> Bool {
        guard let holder = cluster.claims[session]?.node, holder != node, cluster.expired.contains(holder) else {
            return false
        }
        return cluster.recordsReadThrough < cluster.goneReadNeeded
    }

    /// A record load finished: takeovers that waited for it go on, or, when it failed, their
    /// connects are told to retry (whether the holder's last writes are in cannot be known).
    mutating func resumeTakeovers(readFailed failure: String?) {
        guard !cluster.takeoversWaiting.isEmpty else { return }
        if failure == nil && cluster.recordsReadThrough < cluster.goneReadNeeded { return }
        let sessions = cluster.takeoversWaiting.sorted()
        cluster.takeoversWaiting = []
        for session in sessions {
            guard failure != nil else {
                resolvePendingConnects(of: session)
                continue
            }
            for pending in pendingConnects.removeValue(forKey: session) ?? [] where connections.isOpen(pending.connection) {
                connections.setPhase(.awaitingConnect, of: pending.connection)
                fail(pending.requestID, request: "connect", PanesError(
                    .storageFailed, "the session could not be read from the store; retry",
                    retryAfterMs: Int(cluster.readBackoff.currentMs ?? Backoff.sharedStore.minMs)), to: pending.connection)
            }
        }
    }
}
