/// What a node of a cluster knows about the others (`Hub+Cluster.swift`). Empty on a single
/// node, where nothing moves in the store but what the hub itself wrote.
struct ClusterState: Sendable {
    init() {}

    /// What the store held at start: the record sequence and the claims; on a node of a
    /// cluster (`node`), each session's stored copy too.
    init(stored: StoredState, node: NodeID?) {
        recordCursor = stored.recordCursor
        claims = stored.claims
        if node != nil {
            for session in stored.sessions { self.stored[session.id] = session }
        }
    }

    /// The next time something here is due (`Hub.coordinationDue(now:)`).
    var nextDeadline: Millis? {
        [ticketWaitDeadlines.nextDeadline, preferenceRetries.nextDeadline, sceneShareDeadlines.nextDeadline,
         recordRetryAt, releaseRetryAt, nextCheckAt, remoteDropDeadlines.nextDeadline,
         dropReceiptDeadlines.nextDeadline, heldDropPruneAt, heldDropRetries.nextDeadline].compactMap { $0 }.min()
    }

    /// The record sequence applied so far (`SharedStore.loadRecordChanges`).
    var recordCursor: Int64 = 0
    /// A record load is in flight; `recordsWanted` asks for another after it.
    var recordsLoading = false
    var recordsWanted = false
    /// After a read failed (the store is away), when the next record load may start: reads
    /// wait out `readBackoff` rather than fail again at once, for as long as the outage lasts.
    var recordRetryAt: Millis?
    /// How long reads of what other nodes wrote wait after failing (record loads, preference
    /// catch-ups); back to nothing after a read succeeds.
    var readBackoff = Backoff.sharedStore
    /// Sessions this node wrote or deleted while a record load was in flight: the load may have
    /// read them before those writes, so a claim naming this node that it read is not taken
    /// back, nor a copy (or claim) of a session deleted here. (Other session copies it read are
    /// told apart by their `revision`.) Emptied when the load ends, failed or not: the next load
    /// is asked for after these writes.
    var writtenDuringRecordLoad: Set<SessionID> = []
    /// The copy of each session the store has, as far as this node knows (its own last write,
    /// or the newest copy it read: its `revision` is the record's), and the copy its last write
    /// was made from (`Hub+SessionRevisions.swift`).
    var stored: [SessionID: SceneSession] = [:]
    var madeFrom: [SessionID: SceneSession] = [:]
    /// Who holds each session live, as the store last said; only of sessions this node has
    /// (`forgetClaim` when one goes).
    var claims: [SessionID: SessionClaim] = [:]
    /// Sessions whose holder on another node was asked whether its window is alive, for the
    /// connects waiting on them (asked once per wait); each leaves when those connects are
    /// settled or all gone (`holderAsked`).
    var probesSent: Set<SessionID> = []
    /// Claims this node has asked the store for and not heard back about.
    var claiming: Set<SessionID> = []
    /// Sessions whose scene ended here but whose release could not be written (the store was
    /// away): released again, all together, when `releaseRetryAt` comes (`releaseBackoff`).
    var unreleased: Set<SessionID> = []
    var releaseRetryAt: Millis?
    var releaseBackoff = Backoff.sharedStore
    /// Claims whose holder answered a probe with `notLive`, taken as let go once a record load
    /// started after the answer has read what the holder wrote before it.
    var leftBehind: [(after: Int, session: SessionID, holder: NodeID)] = []
    /// Node checks (`Effect.checkNodes`) asked for and answered, by number; one at a time, a
    /// wanted one starts when the one in flight is answered. While connects wait for sessions
    /// held on other nodes, one is asked every `nodeCheckIntervalMs` (`nextCheckAt`).
    var checksStarted = 0
    var checksAnswered = 0
    var checkWanted = false
    var nextCheckAt: Millis?
    /// Nodes whose lease ended: their claims no longer count.
    var expired: Set<NodeID> = []
    /// The nodes whose lease ran as of the store's newest read of them (`nodesAlive`, on the
    /// database's clock); nil before the first. Another node missing from it, not in `expired`,
    /// has let its lease run out (`NodeLeaseState.lapsed`): a connect waiting for a session it
    /// holds is never forked for it, but waits for the end (`awaitHolderLeaseEnd`). The
    /// listener's read and the heartbeat's may arrive out of order: a read begun before the
    /// newest applied (`leasesReadBegan`, this node's monotonic clock) is not taken, so a node
    /// registered before that newest read began is never taken for lapsed. Two reads that
    /// overlap may still see a registration in the earlier-begun one only; the later-begun one
    /// then takes that node for lapsed until the heartbeat's next read (every beat), its
    /// sessions' connects waiting meanwhile where they would have forked, never taken over.
    var leasesRunning: Set<NodeID>?
    var leasesReadBegan: Millis?
    /// This node's own clock says its lease is lost (`ChangeNotice.leaseLost`), and no renewal
    /// has held it again since (`leaseRegained`): nothing attaches here meanwhile.
    var leaseLost = false
    /// The other nodes this node knows to be alive (`Hub+Peers.swift`): added when the store
    /// says their lease runs (`nodesAlive`) or when any signal of theirs arrives, removed only
    /// when their lease is seen ended (`expired`). While it is empty, the lists other nodes
    /// are told again when they ask (a user's live scenes, a node's people) are not built.
    var peers: Set<NodeID> = []
    /// The record load that reads what the nodes found gone last wrote (`nodesExpired`), and
    /// the last record load that succeeded: a session taken over from a gone node is attached
    /// only once the first has finished (`takeoverMustWait`); its connects wait meanwhile.
    var goneReadNeeded = 0
    var recordsReadThrough = 0
    var takeoversWaiting: Set<SessionID> = []
    /// Nodes that asked whether a scene held here is alive, per session, and when the probe
    /// gives up (the scene is then closed and its session let go).
    var remoteProbes: [SessionID: Set<NodeID>] = [:]
    var remoteProbeDeadlines: [SessionID: Millis] = [:]
    /// Connects naming a ticket this node has not heard of yet: its signal may still be on the
    /// way from the node that issued it.
    var ticketWaiters: [Identifier: [WaitingConnect]] = [:]
    var ticketWaitDeadlines = DeadlineQueue<String>()
    /// Connects resuming a session this node has not read yet (made on another node a moment
    /// ago): retried after the next record load that starts after them.
    var recordWaiters: [(after: Int, waiter: WaitingConnect)] = []
    var recordLoadsStarted = 0
    var recordLoadInFlight = 0
    /// Refreshes whose record another node wrote first: made again on the copy the next
    /// record load (started after them) reads.
    var refreshWaiters: [(after: Int, retry: RefreshRetry)] = []
    /// `openDocument`s waiting for this node to read what another node wrote.
    var openWaiters: [OpenWaiter] = []
    /// Presence shared by scenes on other nodes, per document and scene, with the node each
    /// lives on (so it goes when that node does, or the document: `documentRemoved`), and
    /// whether it is stale: held from before this node asked again, not told since.
    var remotePresence: [DocumentID: [SceneID: HeldPresence]] = [:]
    /// After this node asked again: the nodes whose answer's first part has come
    /// (`NodeSignal.Kind.presenceRetold`).
    var presenceAnswering: Set<NodeID> = []
    /// Presence for documents whose record is not read here yet, until a record load reads it
    /// or finds it gone (`Hub+RemotePresence.swift`).
    var unreadPresence: [DocumentID: UnreadPresence] = [:]
    /// What this node last told the others of its people in each document (`sharePeople`).
    var sharedPeople: [DocumentID: [PersonTally]] = [:]
    /// Documents whose people changed while no other node was known alive: told to all once
    /// one is (`sharePeopleHeldBack`).
    var peopleToShare: Set<DocumentID> = []
    /// Those of `peopleToShare` whose people had been told to a node (not empty) when first
    /// held back: kept even once empty here, since that list is to be replaced.
    var peopleToldBeforeHeld: Set<DocumentID> = []
    /// Each user's scenes live on other nodes, per node, as those nodes last told
    /// (`Hub+RemoteScenes.swift`), and what this node last told them of its own.
    var remoteScenes: [OwnerKey: [NodeID: [SessionID: RemoteScene]]] = [:]
    var sharedScenes: [OwnerKey: [SessionID: RemoteScene]] = [:]
    /// Users whose live scenes here changed since last told, when each is due to be told
    /// (`sceneShareIntervalMs` after the last time), and when that was.
    var scenesToShare: Set<OwnerKey> = []
    var sceneShareDeadlines = DeadlineQueue<OwnerKey>()
    /// When each user's live scenes were last told (monotonic clock).
    var scenesSharedAt: [OwnerKey: Millis] = [:]
    /// Drops this node took onto windows live on other nodes, waiting for those nodes' answer
    /// (`Hub+RemoteDrops.swift`), by drag, and when each stops waiting (monotonic clock).
    var remoteDrops: [Identifier: RemoteDrop] = [:]
    var remoteDropDeadlines = DeadlineQueue<String>()
    /// Drops other nodes offered to windows here, by drag: each settled once, and a repeated
    /// offer answered the same; forgotten when `dropReceiptDeadlines` says.
    var dropReceipts: [Identifier: DropReceipt] = [:]
    /// Sessions whose held drops (`HeldDrop`) the next attach here reads
    /// (`Hub+HeldDrops.swift`): one whose claim found drops held for it (taken over from a
    /// node that died, left behind by one, or let go by one), one whose window was gone when a
    /// drop for it settled here, one whose read failed or came back to no window. Empty for
    /// almost every resume, so a resume reads the store only when something may be held. At
    /// most `maxHeldDropMarks`, the oldest forgotten past it (`HeldDropMarks`).
    var heldDropsToRead = HeldDropMarks()
    /// When expired held drops are next deleted from the store (monotonic clock), every
    /// `heldDropPruneIntervalMs` (`Hub.pruneHeldDrops(now:)`).
    var heldDropPruneAt: Millis?
    /// Sessions whose held drops' read failed while their window is open here, read again when
    /// due (monotonic clock), and how many reads in a row failed for each, up to
    /// `heldDropReadRetries` (`Hub.retryHeldDropRead`). Entries are not de-duplicated: a window that
    /// attaches again during a backoff may hold two.
    var heldDropRetries = DeadlineQueue<SessionID>()
    var heldDropReadFailures: [SessionID: Int] = [:]
    var dropReceiptDeadlines = DeadlineQueue<String>()
    /// Domains whose catch-up read failed (the store was unreachable): read again when due, so
    /// a node never goes on serving what it held before a partition because one read failed.
    var preferenceRetries = DeadlineQueue<PreferenceDomain>()
}

/// A connect waiting for what another node wrote: its ticket's signal, or the record of its session.
struct WaitingConnect: Sendable {
    let connection: ConnectionID
    let requestID: RequestID
    let request: ConnectRequest
    let deadline: Millis
}

/// An `openDocument` this node answers once it has read as far as another node.
struct OpenWaiter: Sendable {
    let scene: SceneID
    let requestID: RequestID
    let document: DocumentID
    let revision: Int64?
    /// Record loads started before it; a later one has read the document's record.
    let after: Int
    /// The op ids the client asked about (`openDocument`'s `pending`).
    var pending: [String] = []
    /// The link token it came with (`openDocument`'s `link`).
    var link: String? = nil
}
