/// A store that several nodes share (PostgreSQL): besides what every store does, it lets a
/// node read what the others wrote since it last looked, and keeps the nodes' leases.
///
/// Nodes never trust a wake-up to carry data: a `ChangeNotice` only says "look", and the node
/// reads the change from the store (the log is the truth, notifications are hints). So a
/// notice lost while the listening connection was down costs nothing: after `.resubscribed`
/// the node looks at everything.
public protocol SharedStore: Store, NodeLeases {
    /// `apply`, except that a document commit that conflicts, and that the store can answer
    /// with the operations committed after its base (`CommitOutcome.behind`), is first handed
    /// to `resolve` with them while the transaction still holds the channel's lock: the commit
    /// it returns (the same channel, based on the revision now) is written in its place, in the
    /// same transaction, so no other node can commit in between and make it conflict again.
    /// Each channel is resolved at most once per call. The conflicting commit's outcome is
    /// still in the result (`behind`), as is the replacement's; nil from `resolve` writes nothing.
    /// The result also names the sessions whose claims found drops held (`AppliedWrites`): only
    /// this call says so (`Store.apply(_:)` on a shared store leaves them out).
    ///
    /// Why: two nodes writing one hot document both keep one commit in flight, and a commit
    /// that waited for the other node's lock always finds the channel moved; let go of the
    /// lock, its retry would wait behind the other node's next commit and find it moved again.
    func apply(_ writes: [StoreWrite], resolvingConflicts resolve: (Commit, [StoredOperation]) -> Commit?) throws
        -> AppliedWrites
    /// Sessions and document records written or deleted after `cursor` (a store-wide sequence
    /// that every such write advances), oldest first, and the cursor to ask from next time.
    func loadRecordChanges(after cursor: Int64) throws -> RecordChanges
    /// A domain's changes after `version`, in version order; nil when the log no longer
    /// reaches back that far (the node then reloads the whole domain).
    func loadPreferenceChanges(_ domain: PreferenceDomain, after version: Int64) throws -> [PreferenceChange]?
    /// A document's operations after `revision`, oldest first; nil when the document is gone
    /// or its log was compacted past `revision` (the node then reopens it from its snapshot).
    func loadOperations(_ id: DocumentID, after revision: Int64) throws -> [StoredOperation]?
    /// Makes every later `apply` a write of `node` (nil: of nobody, unchecked): it commits
    /// only while `node`'s lease runs, and throws `NodeRevoked`, with nothing applied, once
    /// that lease has ended. The check is part of the transaction, and another node ending the
    /// lease waits for a transaction that passed it, so the node's last commit comes before
    /// any takeover of its sessions. `leaseMs` bounds how long a transaction may stay open
    /// idle (a node frozen in the middle of one must not hold up the end of its lease).
    func fence(as node: NodeID?, leaseMs: Int)
    /// Reserves request keys for `node` before it handles their requests, in a transaction of
    /// its own: a key recorded already (by any node) comes back `.recorded`; one reserved by
    /// another node whose lease still runs comes back `.reservedElsewhere` (that node has an
    /// attempt in flight); otherwise it is reserved for `node`. A reservation of a node whose
    /// lease ran out, or made before `staleBefore`, is taken over: its node's attempt, if it
    /// ever comes, is left out. Once reserved, no other node's attempt of the request is
    /// written (see `CoordinationCommand.recordKeyedRequest`), so a retry through this node and an
    /// older attempt held elsewhere never both apply.
    func reserveRequestKeys(_ keys: [KeyReservation], node: NodeID, staleBefore: Millis) throws
        -> [RequestKeySlot: KeyReservationOutcome]
    /// These sessions and document records as stored (absent when not stored).
    func loadRecords(sessions: [SessionID], documents: [DocumentID]) throws -> RecordsRead
    /// The drops held for `session` (`CoordinationCommand.holdDrop`) kept at `now` or later,
    /// oldest first.
    func loadHeldDrops(_ session: SessionID, now: Millis) throws -> [HeldDrop]
}

/// The nodes' leases in the shared store, and nothing else: what a node's heartbeat uses, on
/// a connection of its own (`ClusterNode`). A shared store offers them too; a lease-only
/// handle (PostgreSQL: `PostgresLeases`) offers only them.
public protocol NodeLeases: AnyObject {
    /// Enters `node` as alive until `leaseMs` from now (the database's clock, so nodes' clocks
    /// need not agree) and holds its liveness lock on this store connection: a node starting,
    /// or one rejoining under a new identity after it was revoked. The lock a previous identity
    /// held on this connection may be let go at once, whether or not that identity's lease has
    /// ended (PostgreSQL makes the connection anew for each identity): a node registers a new
    /// identity only once its previous one was revoked.
    /// - Returns: the other nodes gone now (as `heartbeat`).
    func register(node: NodeID, leaseMs: Int) throws -> [NodeID]
    /// Renews `node`'s lease until `leaseMs` from now, ends the lease of every other node that
    /// is gone (`checkNodes`), and returns the other nodes gone now, so their sessions can be
    /// taken over.
    ///
    /// A lease is only ever renewed while it runs: once it has ended (run out, or revoked by
    /// another node that found the node's lock free) it stays ended, and this throws
    /// `NodeRevoked`. Another node may hold the node's sessions by then; the node must stop
    /// serving and come back under a new identity (`register`).
    ///
    /// The call also holds `node`'s liveness lock on this store connection (PostgreSQL: a
    /// session-level advisory lock, taken again whenever the connection is new), which the
    /// database lets go the moment the connection drops: a killed node's lock is free at once.
    func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID]
    /// Ends the lease of every other node that is gone: its lease ran out, or its liveness lock
    /// is free although its lease runs (its connection to the store is gone: the process died,
    /// or the connection was cut), and returns the other nodes gone now (`heartbeat`'s list,
    /// without renewing). A node whose connection lingers (cut off from the store, the
    /// database not yet aware) keeps its lock and is gone only once its lease is; so does a
    /// node that has not renewed since the database restarted (`leaseMs`, the lease every node
    /// keeps, tells when it last renewed).
    ///
    /// Ending a lease is ordered with the node's own writes (`fence(as:)`): a transaction of
    /// the node that is under way commits before the lease ends, or not at all. A node is
    /// reported gone only once its lease has ended that way, so whatever takes its sessions
    /// over comes after its last write.
    func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID]
    /// The nodes that hold a lease that runs now, the asking one included: their count is each
    /// node's share of a budget the cluster keeps as a whole (the HTTP API's rate per key,
    /// `APIGate`), and the hub is told of the others (`ChangeNotice.nodesAlive`), so a node
    /// alone builds no lists for nobody. Asked once a heartbeat, never per request.
    func liveNodes() throws -> [NodeID]
    /// Waits up to `timeoutMs` on the connection `heartbeat` uses, returning early when that
    /// connection is found lost (true: the liveness lock went with it) or when
    /// `interruptHeartbeatWait` is called (false). Nil, at once, for a store that has no such
    /// connection to watch: the caller waits its own way.
    func awaitHeartbeatConnection(timeoutMs: Int) -> Bool?
    /// Ends a wait of `awaitHeartbeatConnection` early (from another thread), or the next one.
    func interruptHeartbeatWait()
    /// What `heartbeat`, `register` and `checkNodes` did, or could not do, since the last call
    /// to end a lapsed node's lease (`LeaseEndingNote`), and forgets it. Empty for a store
    /// that needs nothing beyond waiting.
    func takeLeaseEndingNotes() -> [LeaseEndingNote]
}

extension NodeLeases {
    public func awaitHeartbeatConnection(timeoutMs: Int) -> Bool? { nil }
    public func interruptHeartbeatWait() {}
    public func takeLeaseEndingNotes() -> [LeaseEndingNote] { [] }
}

extension SharedStore {
    /// A shared store is its own shared side.
    public var shared: (any SharedStore)? { self }
}

/// This node's lease had ended (another node found it gone and ended it, or it ran out) when
/// it tried to renew it or to commit: nothing was applied. Other nodes may hold its sessions.
public struct NodeRevoked: Error, Sendable, Equatable, CustomStringConvertible {
    public let node: NodeID
    public init(node: NodeID) { self.node = node }
    public var description: String { "the lease of node \(node) has ended: it may no longer write" }
}

/// A key a node asks to reserve, with the request's fingerprint.
public struct KeyReservation: Sendable, Equatable {
    public let slot: RequestKeySlot
    public let fingerprint: String
    public let at: Millis

    public init(slot: RequestKeySlot, fingerprint: String, at: Millis) {
        self.slot = slot
        self.fingerprint = fingerprint
        self.at = at
    }
}

/// What became of a key a node asked to reserve.
public enum KeyReservationOutcome: Sendable, Equatable {
    /// Reserved for the node: it handles the request, and only its attempt can be written.
    case reserved
    /// Answered already: the record says how.
    case recorded(RequestRecord)
    /// Another node, alive, has an attempt of the request in flight.
    case reservedElsewhere(NodeID)
}

/// Sessions and document records as stored, read by id.
public struct RecordsRead: Sendable, Equatable {
    public var sessions: [SessionID: SceneSession]
    public var documents: [DocumentID: DocumentRecord]
    /// Asked for and not stored.
    public var missingSessions: [SessionID]
    public var missingDocuments: [DocumentID]

    public init(sessions: [SessionID: SceneSession] = [:], documents: [DocumentID: DocumentRecord] = [:],
                missingSessions: [SessionID] = [], missingDocuments: [DocumentID] = []) {
        self.sessions = sessions
        self.documents = documents
        self.missingSessions = missingSessions
        self.missingDocuments = missingDocuments
    }
}

/// A node of a cluster: random at each start, so a restarted node never inherits claims.
public struct NodeID: ByteIdentifier, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// What other nodes wrote to single-writer records since a cursor.
public struct RecordChanges: Sendable, Equatable {
    public var sessions: [SceneSession]
    public var deletedSessions: [SessionID]
    public var documents: [DocumentRecord]
    public var deletedDocuments: [DocumentID]
    /// Who holds each changed session now (nil: nobody), with the lease epoch of that claim.
    public var claims: [SessionID: SessionClaim]
    /// The grants and links of each changed document (empty ones included: all were removed).
    public var access: [DocumentID: DocumentAccess] = [:]
    public var cursor: Int64

    public init(sessions: [SceneSession] = [], deletedSessions: [SessionID] = [], documents: [DocumentRecord] = [],
                deletedDocuments: [DocumentID] = [], claims: [SessionID: SessionClaim] = [:], cursor: Int64) {
        self.sessions = sessions
        self.deletedSessions = deletedSessions
        self.documents = documents
        self.deletedDocuments = deletedDocuments
        self.claims = claims
        self.cursor = cursor
    }
}

/// Which node holds a session live, and under which fencing epoch.
public struct SessionClaim: Sendable, Equatable {
    public var node: NodeID?
    public var epoch: Int64

    public init(node: NodeID?, epoch: Int64) {
        self.node = node
        self.epoch = epoch
    }
}

/// One preference change as the shared log keeps it: `value` nil for a removal.
public struct PreferenceChange: Sendable, Equatable {
    public var keyPath: String
    public var value: JSONValue?
    public var version: Int64

    public init(keyPath: String, value: JSONValue?, version: Int64) {
        self.keyPath = keyPath
        self.value = value
        self.version = version
    }
}

/// A hint that something moved in the shared store. Never carries the change itself.
public enum ChangeNotice: Sendable, Equatable {
    /// A channel reached `version`.
    case channel(Channel, version: Int64)
    /// A document's log reached `revision` (the channel notice of a document, with what a
    /// node that does not hold the document open needs for its lists): its length and the
    /// time of its last edit then.
    case documentEdited(DocumentID, revision: Int64, length: Int, modifiedAt: Millis)
    /// Single-writer records (sessions, document records, claims) reached `cursor`.
    case records(cursor: Int64)
    /// The listening connection was lost and is back: notices may have been missed, so the
    /// node catches up on everything it holds.
    case resubscribed
    /// The nodes whose leases have ended (`SharedStore.heartbeat`), the whole set each time it
    /// changes: the sessions they held can be taken over. An ended lease is never renewed (the
    /// node comes back under a new identity); a node leaves the set only when the store forgets
    /// it, long after, once no session names it.
    case nodesExpired([NodeID])
    /// Nodes whose lease ran when the store was asked (the node's own among them): read by the
    /// listener each time it has subscribed (before `resubscribed`) and by the heartbeat every
    /// beat. The hub only adds these to the other nodes it knows are alive
    /// (`ClusterState.peers`), never removes them: a read older than a node's `scenesWanted`
    /// may reach it after, and only `nodesExpired` says a node is gone. `readBegan` is when the
    /// read began, on this node's monotonic clock, taken before the query: a read begun later
    /// sees at least every registration committed before it began, so the hub takes the
    /// leases running (`ClusterState.leasesRunning`) from the newest read only.
    case nodesAlive([NodeID], readBegan: Millis)
    /// The answer to `Effect.checkNodes`: the nodes gone now (`nodesExpired`'s whole set),
    /// delivered once per check the node ran, changed or not; nil when the store could not
    /// be asked.
    case nodesChecked([NodeID]?)
    /// A message another node sent (`NodeSignal`); delivered to every node, each keeps its own.
    case signal(NodeSignal)
    /// This node could not renew its own lease in time (the store is unreachable): another
    /// node may take its sessions over at any moment, so it must stop serving them.
    case leaseLost
    /// A renewal holds this node's lease again after `leaseLost` (the database had not ended it
    /// meanwhile): connections may attach here again.
    case leaseRegained
}

/// Delivers `ChangeNotice`s from a thread of its own (PostgreSQL: a LISTEN connection).
public protocol ChangeListener: AnyObject, Sendable {
    /// Starts listening; `deliver` is called on the listener's thread.
    func start(_ deliver: @escaping @Sendable (ChangeNotice) -> Void)
    /// Stops listening and joins the thread.
    func stop()
}
