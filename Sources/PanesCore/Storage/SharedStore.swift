/// A store that several nodes share (PostgreSQL): besides what every store does, it lets a
/// node read what the others wrote since it last looked, and keeps the nodes' leases.
///
/// Nodes never trust a wake-up to carry data: a `ChangeNotice` only says "look", and the node
/// reads the change from the store (the log is the truth, notifications are hints). So a
/// notice lost while the listening connection was down costs nothing: after `.resubscribed`
/// the node looks at everything.
public protocol SharedStore: Store {
    /// `apply`, except that a document commit that conflicts, and that the store can answer
    /// with the operations committed after its base (`CommitOutcome.behind`), is first handed
    /// to `resolve` with them while the transaction still holds the channel's lock: the commit
    /// it returns (the same channel, based on the revision now) is written in its place, in the
    /// same transaction, so no other node can commit in between and make it conflict again.
    /// Each channel is resolved at most once per call. The conflicting commit's outcome is
    /// still in the result (`behind`), as is the replacement's; nil from `resolve` writes nothing.
    ///
    /// Why: two nodes writing one hot document both keep one commit in flight, and a commit
    /// that waited for the other node's lock always finds the channel moved; let go of the
    /// lock, its retry would wait behind the other node's next commit and find it moved again.
    func apply(_ writes: [StoreWrite], resolvingConflicts resolve: (Commit, [StoredOperation]) -> Commit?) throws
        -> [CommitID: CommitOutcome]
    /// Sessions and document records written or deleted after `cursor` (a store-wide sequence
    /// that every such write advances), oldest first, and the cursor to ask from next time.
    func loadRecordChanges(after cursor: Int64) throws -> RecordChanges
    /// A domain's changes after `version`, in version order; nil when the log no longer
    /// reaches back that far (the node then reloads the whole domain).
    func loadPreferenceChanges(_ domain: PreferenceDomain, after version: Int64) throws -> [PreferenceChange]?
    /// A document's operations after `revision`, oldest first; nil when the document is gone
    /// or its log was compacted past `revision` (the node then reopens it from its snapshot).
    func loadOperations(_ id: DocumentID, after revision: Int64) throws -> [StoredOperation]?
    /// Marks `node` alive until `leaseMs` from now (the database's clock, so nodes' clocks
    /// need not agree), and returns the nodes whose lease has run out, so their sessions
    /// can be taken over. `node` itself is among them when its own lease had run out before
    /// this renewal (it stalled or was cut off): others may have taken its sessions over.
    ///
    /// The call also holds `node`'s liveness lock on this store connection (PostgreSQL: a
    /// session-level advisory lock, taken again whenever the connection is new), which the
    /// database lets go the moment the connection drops: a killed node's lock is free at once.
    func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID]
    /// Ends the lease of every other node whose liveness lock is free although its lease runs
    /// (its connection to the store is gone: the process died), and returns the nodes gone now
    /// (`heartbeat`'s list, without renewing). A node whose connection lingers (cut off from
    /// the store, the database not yet aware) keeps its lock and is gone only once its lease is;
    /// so does a node that has not renewed since the database restarted (`leaseMs`, the lease
    /// every node keeps, tells when it last renewed).
    func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID]
    /// Reserves request keys for `node` before it handles their requests, in a transaction of
    /// its own: a key recorded already (by any node) comes back `.recorded`; one reserved by
    /// another node whose lease still runs comes back `.reservedElsewhere` (that node has an
    /// attempt in flight); otherwise it is reserved for `node`. A reservation of a node whose
    /// lease ran out, or made before `staleBefore`, is taken over: its node's attempt, if it
    /// ever comes, is left out. Once reserved, no other node's attempt of the request is
    /// written (see `StoreCommand.recordKeyedRequest`), so a retry through this node and an
    /// older attempt held elsewhere never both apply.
    func reserveRequestKeys(_ keys: [KeyReservation], node: NodeID, staleBefore: Millis) throws
        -> [RequestKeySlot: KeyReservationOutcome]
    /// These sessions and document records as stored (absent when not stored).
    func loadRecords(sessions: [SessionID], documents: [DocumentID]) throws -> RecordsRead
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
    /// The nodes whose leases have run out now (`SharedStore.heartbeat`), the whole set each
    /// time it changes: the sessions they held can be taken over; a node missing from a later
    /// set renewed after all.
    case nodesExpired([NodeID])
    /// The answer to `Effect.checkNodes`: the nodes gone now (`nodesExpired`'s whole set),
    /// delivered once per check the node ran, changed or not; nil when the store could not
    /// be asked.
    case nodesChecked([NodeID]?)
    /// A message another node sent (`NodeSignal`); delivered to every node, each keeps its own.
    case signal(NodeSignal)
    /// This node could not renew its own lease in time: another node may take its sessions
    /// over at any moment, so it must stop serving them.
    case leaseLost
}

/// Delivers `ChangeNotice`s from a thread of its own (PostgreSQL: a LISTEN connection).
public protocol ChangeListener: AnyObject, Sendable {
    /// Starts listening; `deliver` is called on the listener's thread.
    func start(_ deliver: @escaping @Sendable (ChangeNotice) -> Void)
    /// Stops listening and joins the thread.
    func stop()
}
