/// The coordination seam: the named points at which the single-node code hands over to the
/// cluster. On a single node (`node == nil`) each is trivial: it waits for nothing, finds
/// nothing elsewhere, orders nothing in the store, adds no commands. The single-node code asks
/// `isClustered` nowhere; it calls these points, so a reader of it can take each call as
/// "nothing, alone".
///
/// The points, by what happens at them (defined here, or in the `Cluster/` file named):
/// - A connect that may need another node: `connectWaitsForTicket`, `connectWaitsForRecords`,
///   `connectWaitsForHolder`, `claimsBeforeAttach`, `newSessionClaims`, `ticketUsed`,
///   `holderAsked`, `awaitDecidingCheck` (`Hub+NodeLiveness.swift`); the holder's side of a
///   probe: `answerRemoteProbes`, `expireRemoteProbe` (`Hub+NodeSignals.swift`).
/// - A scene ended: `release` (`Hub+Leases.swift`).
/// - Where a session or scene is live: `heldElsewhere`, `claimInFlight`, `keptActiveElsewhere`,
///   `holderElsewhere`, `sceneElsewhere`, `appStateElsewhere`, `receiverElsewhere`,
///   `presenceElsewhere`.
/// - A change other nodes must hear of: `signal`, `shareTicket`, `sharePresence`, `shareDrag`,
///   `shareScenes`, `shareScenesTick`, `tellSource`, `sessionsWritten`, `sessionWritten`.
/// - A change other nodes may race, ordered in the store first: `dragEndsInStore`,
///   `dragExpiresInStore`, `refreshCommitsInStore`, `openWaitsForOtherNodes`, and their
///   outcomes, routed back by `Hub+Commits.swift`: `claimCommitted`, `settleLateClaim`,
///   `dragEndCommitted`, `expiryCommitted`, `refreshCommitted`.
/// - What this node holds may lag the store: `sharesStore`, `preferenceReadFailed`, `readFailed`,
///   the generic channel writer's `follow` (`Hub+ChannelWriting.swift`), the reads only a
///   cluster asks for, routed back by `Hub.loaded`: `recordChangesLoaded`, `operationsLoaded`,
///   `preferenceChangesLoaded`, `retryOpens`; and a write left out for another node's record of
///   its key: `takeRemoteRecord`, `forgetRemotelyDeleted`, `forgetRevisions`.
/// - Events only a cluster sends: `notice` (`Hub+Cluster.swift`).
/// - The passing of time: `coordinationDue(now:)`, `ClusterState.nextDeadline`.
extension Hub {
    /// Whether this hub is a node of a cluster (its store is shared). Asked here only: the
    /// single-node code asks one of the named points below instead.
    var isClustered: Bool { node != nil }

    /// Whether other nodes write to the same store: what this node holds may lag it (a version
    /// conflict or a revision newer than held is not yet an error, a key may be recorded by
    /// another node's attempt), and what it forgets must be written for them.
    var sharesStore: Bool { isClustered }

    // MARK: Connects

    /// A connect naming a ticket not heard of here, which in a cluster may still be on its way
    /// from the node that issued it: it waits for the ticket (once, `allowed`).
    /// - Returns: whether it waits (it is answered later).
    mutating func connectWaitsForTicket(_ id: String, allowed: Bool, connection: ConnectionID, requestID: RequestID,
                                        request: ConnectRequest) -> Bool {
        guard isClustered, allowed, tickets[id] == nil else { return false }
        waitForTicket(id, connection: connection, requestID: requestID, request: request)
        return true
    }

    /// A connect for a session not read here, which in a cluster may have been made on another
    /// node a moment ago: it waits for the next record load (once, `allowed`).
    /// - Returns: whether it waits (it is answered later).
    mutating func connectWaitsForRecords(of session: SessionID?, allowed: Bool, connection: ConnectionID,
                                         requestID: RequestID, request: ConnectRequest) -> Bool {
        guard isClustered, allowed, let session, sessions[session] == nil else { return false }
        waitForRecords(connection: connection, requestID: requestID, request: request)
        return true
    }

    /// A ticket used here: the other nodes forget it too.
    mutating func ticketUsed(_ id: String) {
        signal(.ticketUsed(id), to: nil)
    }

    /// A connect for a session live on another node, or about to be (a claim in flight): it
    /// waits for that node to let go (a reload), for its lease to run out (the node died: take
    /// over), or for the deadline (a duplicated tab, which then forks). The deadline outlasts a
    /// lease, so a dead node's session is resumed, not forked.
    /// - Returns: whether it waits (it is answered later).
    mutating func connectWaitsForHolder(_ pending: PendingConnect, of target: SessionID) -> Bool {
        guard isClustered, claimedElsewhere(target) || cluster.claiming.contains(target) else { return false }
        var waiting = pending
        waiting.deadline = monotonic() + Millis(settings.nodeLeaseMs + 2 * settings.nodeHeartbeatMs)
        wait(waiting, for: target)
        askHolder(target)
        return true
    }

    /// A session nobody holds live, about to be attached: in a cluster the node first claims
    /// its lease (`claim`), and attaches once the claim is won.
    /// - Returns: whether the attach waits for the claim.
    mutating func claimsBeforeAttach(_ target: SessionID, for pending: PendingConnect) -> Bool {
        guard isClustered else { return false }
        claim(target, for: pending)
        return true
    }

    /// A session made here: nobody else can know it yet, so the claim waits for nothing. It is
    /// claimed in the same write that first stores it, so no other node can ever read it
    /// unclaimed and attach to it too.
    /// - Returns: the command to persist with the session (none on a single node).
    mutating func newSessionClaims(_ session: SessionID) -> [StoreCommand] {
        guard isClustered else { return [] }
        let claim = SessionClaim(node: node, epoch: 1)
        cluster.claims[session] = claim
        return [.claimSession(session, claim)]
    }

    /// Whether another live node holds the session (never, alone).
    func heldElsewhere(_ session: SessionID) -> Bool {
        isClustered && claimedElsewhere(session)
    }

    /// Whether this node is claiming the session and has not heard back.
    func claimInFlight(_ session: SessionID) -> Bool {
        cluster.claiming.contains(session)
    }

    /// Whether another node holds the session, which then keeps it active (its idle expiry is
    /// that node's to make).
    func keptActiveElsewhere(_ session: SessionID) -> Bool {
        guard let holder = cluster.claims[session]?.node else { return false }
        return holder != node
    }

    /// The connects waiting for a session are being settled: its holder on another node is
    /// asked again by the next wait.
    mutating func holderAsked(_ session: SessionID) {
        cluster.probesSent.remove(session)
    }

    /// A committed claim whose connect was answered `outcome_unknown` meanwhile: nobody is live
    /// on the session here, so it is let go at once.
    /// - Returns: whether the outcome was settled here.
    mutating func settleLateClaim(_ pending: PendingCommit, committed: Bool) -> Bool {
        guard case .claim(let session, let claim, nil) = pending, committed, claim.node == node,
              !scenes.isLive(session) else { return false }
        cluster.claiming.remove(session)
        cluster.claims[session] = claim
        release(session)
        return true
    }

    // MARK: Writes other nodes must hear of

    /// Sessions persisted: a record load in flight may have read them before these writes, so
    /// what it read of them is not taken over this node's (`writtenDuringRecordLoad`).
    mutating func sessionsWritten(_ commands: [StoreCommand]) {
        guard cluster.recordsLoading else { return }
        for case .putSession(let session) in commands { cluster.writtenDuringRecordLoad.insert(session.id) }
    }

    /// `sessionsWritten` for one session written quietly (`persistQuietly`).
    mutating func sessionWritten(_ id: SessionID) {
        if cluster.recordsLoading { cluster.writtenDuringRecordLoad.insert(id) }
    }

    // MARK: Changes ordered in the store

    /// A drop or cancel: in a cluster it is first a compare-and-set on the drag's channel, so
    /// a drop and a cancel racing through two nodes end the drag once; answered when it is in.
    /// - Returns: whether the ending waits for the store.
    mutating func dragEndsInStore(_ drag: DragState.Drag, _ ending: DragEnding) -> Bool {
        guard isClustered else { return false }
        endInStore(drag, ending)
        return true
    }

    /// A drag's expiry, in a cluster ordered in the store like a drop, so a drop made through
    /// another node in the last moment and the expiry are not both reported. The drag is kept
    /// until the store says how it ended.
    /// - Returns: whether the expiry waits for the store.
    mutating func dragExpiresInStore(_ drag: DragState.Drag) -> Bool {
        guard isClustered else { return false }
        drags.setPhase(.expiring, of: drag.id)
        expireInStore(drag)
        return true
    }

    /// A refresh of a session live nowhere: in a cluster another node may write it at the same
    /// time, so it is a commit on the session's record (`commitRefresh`), answered when it is in.
    /// - Returns: whether the refresh waits for the store (the request is answered then).
    mutating func refreshCommitsInStore(_ session: SceneSession, _ request: RefreshRequest, context: RequestContext,
                                        attempt: Int) -> Bool {
        guard isClustered, !scenes.isLive(session.id) else { return false }
        commitRefresh(session, request, context: context, attempt: attempt)
        return true
    }

    /// An `openDocument` that another node is ahead of (it made the document, made the link,
    /// or the client saw newer revisions there): answered once this node has read as far.
    /// - Returns: whether it waits (it is answered later).
    mutating func openWaitsForOtherNodes(_ id: DocumentID, revision: Int64?, pending: [String], link: String?,
                                         requestID: RequestID, scene: Scene) -> Bool {
        guard isClustered, let wait = openMustWait(id, revision: revision, link: link, scene: scene) else { return false }
        cluster.openWaiters.append(OpenWaiter(scene: scene.id, requestID: requestID, document: id, revision: revision,
                                              after: cluster.recordLoadsStarted, pending: pending, link: link))
        switch wait {
        case .records: if cluster.recordsLoading { cluster.recordsWanted = true } else { loadRecordChanges() }
        case .operations(let target): followDocument(id, to: target)
        }
        return true
    }

    // MARK: Reads of what others wrote

    /// A preference domain's read failed: in a cluster it is read again when due, so a node
    /// never goes on serving what it held before a partition because one read failed.
    mutating func preferenceReadFailed(_ domain: PreferenceDomain) {
        guard isClustered else { return }
        cluster.preferenceRetries.push(domain, at: monotonic() + cluster.readBackoff.failed())
    }

    /// A read of the store failed: how long to wait before reading again (the shared read
    /// backoff, which grows while the store stays away).
    mutating func readFailed() -> Millis {
        cluster.readBackoff.failed()
    }

    // MARK: Time

    /// What the cluster has due: connects whose ticket never came, reads to retry, releases
    /// to write again, node checks while connects wait on other nodes.
    mutating func coordinationDue(now: Millis) {
        expireTicketWaits(now: now)
        for (_, domain) in cluster.preferenceRetries.popDue(now: now) { follow(PreferenceChannel.self, domain, to: .max) }
        retryRecordLoad(now: now)
        retryReleases(now: now)
        checkNodesWhileWaiting(now: now)
    }
}
