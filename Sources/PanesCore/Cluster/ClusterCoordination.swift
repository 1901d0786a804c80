/// The coordination of a node of a cluster (`node != nil`): its store is shared with other
/// nodes. The points' cluster code, most of it in the `Cluster/` files it names; this type only
/// says which of it runs at each point.
struct ClusterCoordination: Coordination {
    /// This node (`Hub.node`).
    let node: NodeID

    var sharesStore: Bool { true }

    // MARK: Connects

    func connectWaitsForTicket(_ hub: inout Hub, _ id: String, allowed: Bool, connection: ConnectionID,
                               requestID: RequestID, request: ConnectRequest) -> Bool {
        guard allowed, hub.tickets[id] == nil else { return false }
        hub.waitForTicket(id, connection: connection, requestID: requestID, request: request)
        return true
    }

    func connectWaitsForRecords(_ hub: inout Hub, of session: SessionID?, allowed: Bool, connection: ConnectionID,
                                requestID: RequestID, request: ConnectRequest) -> Bool {
        guard allowed, let session, hub.sessions[session] == nil else { return false }
        hub.waitForRecords(connection: connection, requestID: requestID, request: request)
        return true
    }

    func ticketUsed(_ hub: inout Hub, _ id: String) {
        hub.signal(.ticketUsed(id), to: nil)
    }

    /// The deadline outlasts a lease, so a dead node's session is resumed, not forked.
    func connectWaitsForHolder(_ hub: inout Hub, _ pending: PendingConnect, of target: SessionID) -> Bool {
        guard hub.claimedElsewhere(target) || hub.cluster.claiming.contains(target) else { return false }
        var waiting = pending
        waiting.deadline = hub.monotonic() + Millis(hub.settings.nodeLeaseMs + 2 * hub.settings.nodeHeartbeatMs)
        hub.wait(waiting, for: target)
        hub.askHolder(target)
        return true
    }

    func claimsBeforeAttach(_ hub: inout Hub, _ target: SessionID, for pending: PendingConnect) -> Bool {
        hub.claim(target, for: pending)
        return true
    }

    /// Nobody else can know a session made here yet, so the claim waits for nothing; claimed in
    /// the same write that first stores it, no other node can ever read it unclaimed and attach
    /// to it too.
    func newSessionClaims(_ hub: inout Hub, _ session: SessionID) -> [StoreCommand] {
        let claim = SessionClaim(node: node, epoch: 1)
        hub.cluster.claims[session] = claim
        return [.coordination(.claimSession(session, claim))]
    }

    func holderAsked(_ hub: inout Hub, _ session: SessionID) {
        hub.cluster.probesSent.remove(session)
    }

    /// A committed claim whose connect was answered `outcome_unknown` meanwhile: nobody is live
    /// on the session here, so it is let go at once.
    func settleLateClaim(_ hub: inout Hub, _ pending: PendingCommit, committed: Bool) -> Bool {
        guard case .claim(let session, let claim, nil) = pending, committed, claim.node == node,
              !hub.scenes.isLive(session) else { return false }
        hub.cluster.claiming.remove(session)
        // A session discarded meanwhile keeps no claim here (nor is released: the deletion
        // took its claim out of the store).
        guard hub.sessions[session] != nil else { return true }
        hub.cluster.claims[session] = claim
        hub.releaseLease(session)
        return true
    }

    func connectsWaiting(_ hub: Hub) -> [ReplyRef] { hub.connectsWaitingOnTheCluster() }

    func answerRemoteProbes(_ hub: inout Hub, of session: SessionID) { hub.answerProbes(of: session) }
    func expireRemoteProbe(_ hub: inout Hub, of session: SessionID, now: Millis) {
        hub.expireProbe(of: session, now: now)
    }

    // MARK: Scenes ended

    func release(_ hub: inout Hub, _ session: SessionID) { hub.releaseLease(session) }

    /// Its claim was the only thing that kept an entry of a session destroyed here: the map
    /// grew with every session made and destroyed on the node.
    func sessionDiscarded(_ hub: inout Hub, _ session: SessionID) { hub.forgetClaim(of: session) }

    // MARK: Where a session or scene is live

    func heldElsewhere(_ hub: Hub, _ session: SessionID) -> Bool { hub.claimedElsewhere(session) }
    func claimInFlight(_ hub: Hub, _ session: SessionID) -> Bool { hub.cluster.claiming.contains(session) }

    /// Its idle expiry is the holder's to make.
    func keptActiveElsewhere(_ hub: Hub, _ session: SessionID) -> Bool {
        guard let holder = hub.cluster.claims[session]?.node else { return false }
        return holder != node
    }

    func holderElsewhere(_ hub: Hub, _ session: SessionID) -> NodeID? { hub.holderOnAnotherNode(session) }
    func sceneElsewhere(_ hub: Hub, of session: SceneSession) -> RemoteScene? { hub.remoteScene(of: session) }
    func appStateElsewhere(_ hub: Hub, of owner: OwnerKey) -> ActivationState? { hub.remoteAppState(of: owner) }
    func receiverElsewhere(_ hub: Hub, of target: DropTarget, named: SceneID?, dropper: Dropper) -> RemoteReceiver? {
        hub.remoteReceiver(of: target, named: named, dropper: dropper)
    }
    func presenceElsewhere(_ hub: Hub, in document: DocumentID) -> [JSONValue] { hub.remotePresence(in: document) }

    // MARK: Changes other nodes must hear of

    func shareTicket(_ hub: inout Hub, _ ticket: Ticket) { hub.signal(.ticket(ticket.json), to: nil) }
    func sharePresence(_ hub: inout Hub, _ presence: JSONValue) { hub.signal(.presence(presence), to: nil) }
    func sharePeople(_ hub: inout Hub, of id: DocumentID) { hub.signalPeople(of: id) }
    func shareDrag(_ hub: inout Hub, _ drag: DragState.Drag) { hub.signalDrag(drag) }
    func shareDragEnded(_ hub: inout Hub, _ dragID: String, _ event: ServerEvent) {
        hub.signal(.dragEnded(["drag": .string(dragID), "event": .object(event.fields)]), to: nil)
    }
    func shareScenes(_ hub: inout Hub, of owner: OwnerKey) { hub.scheduleSceneShare(of: owner) }
    /// What was told of its people, and what other nodes' scenes shared in it: those scenes
    /// leave it without a `left` (it is gone under them), so nothing else would drop it.
    func documentRemoved(_ hub: inout Hub, _ id: DocumentID) {
        hub.cluster.sharedPeople[id] = nil
        hub.cluster.remotePresence[id] = nil
        hub.cluster.unreadPresence[id] = nil
    }
    func counted(_ hub: inout Hub, _ commands: [StoreCommand]) -> [StoreCommand] { hub.countedRevisions(commands) }

    /// A record load in flight may have read these sessions before these writes (or their
    /// deletion), so what it read of them is not taken over this node's
    /// (`writtenDuringRecordLoad`).
    func sessionsWritten(_ hub: inout Hub, _ commands: [StoreCommand]) {
        guard hub.cluster.recordsLoading else { return }
        // `.putSessionLiveness` too: today a cluster node turns it into a counted `.putSession`
        // before it is written (`counted`), but a path that wrote it as it is would otherwise
        // let a record load read before the write replace it.
        for command in commands {
            switch command {
            case .putSession(let session):
                hub.cluster.writtenDuringRecordLoad.insert(session.id)
            case .putSessionLiveness(let liveness):
                hub.cluster.writtenDuringRecordLoad.insert(liveness.id)
            case .deleteSession(let id):
                // What it read of a session deleted here since is older than the deletion.
                hub.cluster.writtenDuringRecordLoad.insert(id)
            default:
                continue
            }
        }
    }

    func sessionWritten(_ hub: inout Hub, _ id: SessionID) {
        if hub.cluster.recordsLoading { hub.cluster.writtenDuringRecordLoad.insert(id) }
    }

    // MARK: Changes ordered in the store

    /// A drop and a cancel racing through two nodes end the drag once; answered when it is in.
    func dragEndsInStore(_ hub: inout Hub, _ drag: DragState.Drag, _ ending: DragEnding) -> Bool {
        hub.endInStore(drag, ending)
        return true
    }

    /// A drop made through another node in the last moment and the expiry are not both
    /// reported. The drag is kept until the store says how it ended.
    func dragExpiresInStore(_ hub: inout Hub, _ drag: DragState.Drag) -> Bool {
        hub.drags.setPhase(.expiring, of: drag.id)
        hub.expireInStore(drag)
        return true
    }

    /// Another node may write the session at the same time: a commit on its record
    /// (`commitRefresh`), answered when it is in.
    func refreshCommitsInStore(_ hub: inout Hub, _ session: SceneSession, _ request: RefreshRequest,
                               context: RequestContext, attempt: Int) -> Bool {
        guard !hub.scenes.isLive(session.id) else { return false }
        hub.commitRefresh(session, request, context: context, attempt: attempt)
        return true
    }

    /// Another node made the document, made the link, or the client saw newer revisions there.
    func openWaitsForOtherNodes(_ hub: inout Hub, _ id: DocumentID, revision: Int64?, pending: [String], link: String?,
                                requestID: RequestID, scene: Scene) -> Bool {
        guard let wait = hub.openMustWait(id, revision: revision, link: link, scene: scene) else { return false }
        hub.cluster.openWaiters.append(OpenWaiter(scene: scene.id, requestID: requestID, document: id,
                                                  revision: revision, after: hub.cluster.recordLoadsStarted,
                                                  pending: pending, link: link))
        switch wait {
        case .records:
            if hub.cluster.recordsLoading { hub.cluster.recordsWanted = true } else { hub.loadRecordChanges() }
        case .operations(let target): hub.followDocument(id, to: target)
        }
        return true
    }

    // MARK: Keyed requests

    func recordCommand(_ hub: inout Hub, _ record: RequestRecord, reporting commands: [StoreCommand]?) -> StoreCommand {
        guard let commands else { return .coordination(.recordKeyedRequest(record, node: node, report: nil)) }
        let id = hub.commits.makeID()
        hub.commits.pending[id] = .keyedWrite(record.slot, commands)
        return .coordination(.recordKeyedRequest(record, node: node, report: id))
    }

    /// A reservation older than a lease is stale: its node recorded it by then, or holds a
    /// write that will be left out.
    func reserveKey(_ hub: inout Hub, _ slot: RequestKeySlot, fingerprint: String) {
        let reservation = KeyReservation(slot: slot, fingerprint: fingerprint, at: hub.now())
        hub.effects.append(.load(.reserveRequestKeys([reservation], node: node,
                                                     staleBefore: hub.now() - Millis(hub.settings.nodeLeaseMs))))
    }

    func releaseKey(_ hub: inout Hub, _ slot: RequestKeySlot) {
        hub.effects.append(.persistQuietly([.coordination(.releaseRequestKey(slot, node: node))]))
    }

    // MARK: Reads of what others wrote

    /// Read again when due, so a node never goes on serving what it held before a partition
    /// because one read failed.
    func preferenceReadFailed(_ hub: inout Hub, _ domain: PreferenceDomain) {
        let at = hub.monotonic() + hub.cluster.readBackoff.failed()
        hub.cluster.preferenceRetries.push(domain, at: at)
    }

    func notice(_ hub: inout Hub, _ notice: ChangeNotice) { hub.followNotice(notice) }

    // MARK: Time

    func due(_ hub: inout Hub, now: Millis) {
        hub.expireTicketWaits(now: now)
        for (_, domain) in hub.cluster.preferenceRetries.popDue(now: now) {
            hub.follow(PreferenceChannel.self, domain, to: .max)
        }
        hub.retryRecordLoad(now: now)
        hub.retryReleases(now: now)
        hub.checkNodesWhileWaiting(now: now)
        hub.expireRemoteDrops(now: now)
        hub.forgetDropReceipts(now: now)
        hub.pruneHeldDrops(now: now)
        hub.retryHeldDropReads(now: now)
    }

    func shareScenesTick(_ hub: inout Hub, now: Millis) { hub.shareDueScenes(now: now) }
    func nextDeadline(_ hub: Hub) -> Millis? { hub.cluster.nextDeadline }
}
