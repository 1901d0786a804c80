/// The coordination seam: what the hub does at the named points where the single-node code
/// hands over to the cluster. Two implementations: `SingleNodeCoordination`, where each point is
/// trivial (it waits for nothing, finds nothing elsewhere, orders nothing in the store, adds no
/// commands, tells nobody), and `ClusterCoordination`, the cluster's code. The hub picks one at
/// init from its `node` (`Hub.coordination`, `makeCoordination(for:)`), the only place that asks
/// whether it is a node of a cluster; the single-node code calls the points
/// (`Hub+Coordination.swift` forwards each to the implementation), so a reader of it can take
/// each call as "nothing, alone". Only the cluster implementation and the `Cluster/` files touch `Hub.cluster`, and
/// only they emit the cluster's channels and commands (`CoordinationChannel`,
/// `CoordinationCommand`).
///
/// The points, by what happens at them:
/// - A connect that may need another node: `connectWaitsForTicket`, `connectWaitsForRecords`,
///   `connectWaitsForHolder`, `claimsBeforeAttach`, `newSessionClaims`, `ticketUsed`,
///   `holderAsked`, `settleLateClaim`, `connectsWaiting`; the holder's side of a probe: `answerRemoteProbes`,
///   `expireRemoteProbe`.
/// - A scene ended: `release`. A session discarded: `sessionDiscarded`.
/// - Where a session or scene is live: `heldElsewhere`, `claimInFlight`, `keptActiveElsewhere`,
///   `holderElsewhere`, `sceneElsewhere`, `appStateElsewhere`, `receiverElsewhere`,
///   `presenceElsewhere`.
/// - A change other nodes must hear of: `shareTicket`, `sharePresence`, `sharePeople`,
///   `shareDrag`, `shareDragEnded`, `shareScenes`, `documentRemoved`, and the writes of
///   sessions: `counted`, `sessionsWritten`, `sessionWritten`.
/// - A change other nodes may race, ordered in the store first: `dragEndsInStore`,
///   `dragExpiresInStore`, `refreshCommitsInStore`, `openWaitsForOtherNodes`.
/// - What this node holds may lag the store: `sharesStore`, `preferenceReadFailed`; keyed
///   requests other nodes may race: `recordCommand`, `reserveKey`, `releaseKey`.
/// - Events only a cluster sends: `notice`.
/// - The passing of time: `due(now:)`, `shareScenesTick(now:)`, `nextDeadline`.
///
/// What only the cluster implementation starts comes back to the cluster's code directly,
/// never on a single node: the outcomes of its commits (`Hub+Commits.swift` routes
/// `PendingCommit.claim`, `.dragEnd`, `.dragExpiry`, `.dropReturn`, `.dropSettle`, `.dropRecovery`,
/// `.refresh` to `claimCommitted`, `dragEndCommitted`, `expiryCommitted`, `dropReturnCommitted`,
/// `dropSettleCommitted`, `dropRecoveryCommitted`, `refreshCommitted`; and a drag's phase
/// `unsettled`, which only `expiryCommitted` sets, to `recoverDrop`), the reads only it asks for
/// (`Hub.loaded`: `recordChangesLoaded`, `operationsLoaded`, `preferenceChangesLoaded`), a
/// document's catch-up (`retryOpens`), what follows a node signal, and a keyed write another
/// node's attempt left out (`recordsRead`: `readFailed`, `takeRemoteRecord`,
/// `forgetRemotelyDeleted`, `forgetRevisions`), and the signals sent to a holder or receiver
/// another point found (`signal`).
protocol Coordination: Sendable {
    /// Whether other nodes write to the same store: what this node holds may lag it (a version
    /// conflict or a revision newer than held is not yet an error, a key may be recorded by
    /// another node's attempt), and what it forgets must be written for them.
    var sharesStore: Bool { get }

    // MARK: Connects

    /// A connect naming a ticket not heard of here, which in a cluster may still be on its way
    /// from the node that issued it: it waits for the ticket (once, `allowed`).
    /// - Returns: whether it waits (it is answered later).
    func connectWaitsForTicket(_ hub: inout Hub, _ id: String, allowed: Bool, connection: ConnectionID,
                               requestID: RequestID, request: ConnectRequest) -> Bool
    /// A connect for a session not read here, which in a cluster may have been made on another
    /// node a moment ago: it waits for the next record load (once, `allowed`).
    /// - Returns: whether it waits (it is answered later).
    func connectWaitsForRecords(_ hub: inout Hub, of session: SessionID?, allowed: Bool, connection: ConnectionID,
                                requestID: RequestID, request: ConnectRequest) -> Bool
    /// A ticket used here: the other nodes forget it too.
    func ticketUsed(_ hub: inout Hub, _ id: String)
    /// A connect for a session live on another node, or about to be (a claim in flight): it
    /// waits for that node to let go (a reload), for its lease to run out (the node died: take
    /// over), or for the deadline (a duplicated tab, which then forks).
    /// - Returns: whether it waits (it is answered later).
    func connectWaitsForHolder(_ hub: inout Hub, _ pending: PendingConnect, of target: SessionID) -> Bool
    /// A session nobody holds live, about to be attached: in a cluster the node first claims
    /// its lease, and attaches once the claim is won.
    /// - Returns: whether the attach waits for the claim.
    func claimsBeforeAttach(_ hub: inout Hub, _ target: SessionID, for pending: PendingConnect) -> Bool
    /// A session made here: the commands that claim it in the same write that first stores it
    /// (none on a single node).
    func newSessionClaims(_ hub: inout Hub, _ session: SessionID) -> [StoreCommand]
    /// The connects waiting for a session are being settled: its holder on another node is
    /// asked again by the next wait.
    func holderAsked(_ hub: inout Hub, _ session: SessionID)
    /// A commit whose connect was answered `outcome_unknown` meanwhile, now known.
    /// - Returns: whether the outcome was settled here (a claim let go at once).
    func settleLateClaim(_ hub: inout Hub, _ pending: PendingCommit, committed: Bool) -> Bool
    /// The `connect`s waiting on another node or the shared store (a claim in flight, a ticket
    /// not heard of yet, a record read), by their connection and request: the drain answers
    /// them (none on a single node).
    func connectsWaiting(_ hub: Hub) -> [ReplyRef]
    /// The session's scene answered a ping: the nodes that asked are told.
    func answerRemoteProbes(_ hub: inout Hub, of session: SessionID)
    /// A probe's deadline passed: a probe another node asked for that went unanswered ends the
    /// scene here.
    func expireRemoteProbe(_ hub: inout Hub, of session: SessionID, now: Millis)

    // MARK: Scenes ended

    /// A session whose scene ended here: its lease is let go, so a reload on another node
    /// resumes it at once.
    func release(_ hub: inout Hub, _ session: SessionID)
    /// A session discarded here (destroyed, idle, its document deleted, deleted on another
    /// node): what the cluster kept of it (its claim) is forgotten with it.
    func sessionDiscarded(_ hub: inout Hub, _ session: SessionID)

    // MARK: Where a session or scene is live

    /// Whether another live node holds the session.
    func heldElsewhere(_ hub: Hub, _ session: SessionID) -> Bool
    /// Whether this node is claiming the session and has not heard back.
    func claimInFlight(_ hub: Hub, _ session: SessionID) -> Bool
    /// Whether another node holds the session, which then keeps it active.
    func keptActiveElsewhere(_ hub: Hub, _ session: SessionID) -> Bool
    /// The node holding the session, when that is another live node.
    func holderElsewhere(_ hub: Hub, _ session: SessionID) -> NodeID?
    /// The scene live on another node for this session, as its holder last told.
    func sceneElsewhere(_ hub: Hub, of session: SceneSession) -> RemoteScene?
    /// The highest state of the user's scenes on other nodes.
    func appStateElsewhere(_ hub: Hub, of owner: OwnerKey) -> ActivationState?
    /// The scene a drop onto a named scene goes to when that scene is live on another node.
    func receiverElsewhere(_ hub: Hub, of target: DropTarget, named: SceneID?, dropper: Dropper) -> RemoteReceiver?
    /// Presence of scenes on other nodes in the document, for `openDocument`'s `presence`.
    func presenceElsewhere(_ hub: Hub, in document: DocumentID) -> [JSONValue]

    // MARK: Changes other nodes must hear of

    func shareTicket(_ hub: inout Hub, _ ticket: Ticket)
    /// What a scene here shares in a document (or that it left).
    func sharePresence(_ hub: inout Hub, _ presence: JSONValue)
    /// This node's people in the document, if they changed since last told.
    func sharePeople(_ hub: inout Hub, of id: DocumentID)
    /// A drag begun here.
    func shareDrag(_ hub: inout Hub, _ drag: DragState.Drag)
    /// A drag ended here (`dragEnded` told to its source): every other node marks it ended.
    func shareDragEnded(_ hub: inout Hub, _ dragID: String, _ event: ServerEvent)
    /// The user's live scenes here changed.
    func shareScenes(_ hub: inout Hub, of owner: OwnerKey)
    /// A document deleted (here, or read as deleted): what was told of its people, and the
    /// presence other nodes' scenes shared in it, are forgotten.
    func documentRemoved(_ hub: inout Hub, _ id: DocumentID)
    /// Session writes about to be persisted, each counted on from the newest copy known
    /// (`SceneSession.revision`); returned unchanged on a single node.
    func counted(_ hub: inout Hub, _ commands: [StoreCommand]) -> [StoreCommand]
    /// Sessions persisted: a record load in flight does not take what it read of them over
    /// this node's.
    func sessionsWritten(_ hub: inout Hub, _ commands: [StoreCommand])
    /// `sessionsWritten` for one session written quietly (`persistQuietly`).
    func sessionWritten(_ hub: inout Hub, _ id: SessionID)

    // MARK: Changes ordered in the store

    /// A drop or cancel: in a cluster first a compare-and-set on the drag's channel.
    /// - Returns: whether the ending waits for the store.
    func dragEndsInStore(_ hub: inout Hub, _ drag: DragState.Drag, _ ending: DragEnding) -> Bool
    /// A drag's expiry, in a cluster ordered in the store like a drop.
    /// - Returns: whether the expiry waits for the store.
    func dragExpiresInStore(_ hub: inout Hub, _ drag: DragState.Drag) -> Bool
    /// A refresh of a session live nowhere: in a cluster a commit on the session's record.
    /// - Returns: whether the refresh waits for the store (the request is answered then).
    func refreshCommitsInStore(_ hub: inout Hub, _ session: SceneSession, _ request: RefreshRequest,
                               context: RequestContext, attempt: Int) -> Bool
    /// An `openDocument` that another node is ahead of: answered once this node has read as far.
    /// - Returns: whether it waits (it is answered later).
    func openWaitsForOtherNodes(_ hub: inout Hub, _ id: DocumentID, revision: Int64?, pending: [String], link: String?,
                                requestID: RequestID, scene: Scene) -> Bool

    // MARK: Reads of what others wrote

    /// The command that records a keyed request's outcome: on a single node `recordRequest`; in
    /// a cluster `recordKeyedRequest`, which other nodes' attempts may race, reported back as
    /// the outcome of a persist carrying `commands` (`keyedWriteCommitted`), or, with nil, by
    /// the commit that carries it.
    func recordCommand(_ hub: inout Hub, _ record: RequestRecord, reporting commands: [StoreCommand]?) -> StoreCommand
    /// A key this node does not hold, looked up before its request is handled: in a cluster it
    /// is reserved for this node in the shared store (a single node holds every key it has).
    func reserveKey(_ hub: inout Hub, _ slot: RequestKeySlot, fingerprint: String)
    /// A reserved key whose request failed, applying nothing: freed for a retry through any node.
    func releaseKey(_ hub: inout Hub, _ slot: RequestKeySlot)

    /// A preference domain's read failed: in a cluster it is read again when due.
    func preferenceReadFailed(_ hub: inout Hub, _ domain: PreferenceDomain)
    /// Another node wrote to the shared store (`HubEvent.notice`).
    func notice(_ hub: inout Hub, _ notice: ChangeNotice)

    // MARK: Time

    /// What is due on the tick: connects whose ticket never came, reads to retry, releases to
    /// write again, node checks while connects wait on other nodes.
    func due(_ hub: inout Hub, now: Millis)
    /// What is due to be told with the announcements: users' live scenes whose interval passed.
    func shareScenesTick(_ hub: inout Hub, now: Millis)
    /// The next time something of the coordination is due (monotonic).
    func nextDeadline(_ hub: Hub) -> Millis?
}

/// The coordination for a hub: a cluster's when the hub is a node of one, a single node's
/// otherwise. The one place that asks.
func makeCoordination(for node: NodeID?) -> any Coordination {
    guard let node else { return SingleNodeCoordination() }
    return ClusterCoordination(node: node)
}
