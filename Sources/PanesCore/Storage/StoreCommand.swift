/// One change to durable state. The hub emits them; a store applies a batch atomically.
public enum StoreCommand: Sendable, Equatable {
    /// Stores the session. A shared store drops it when the stored copy's `revision` is not
    /// older (a write made from an older copy); revision 0 is always written. A session whose
    /// hash is `SecretHash.unmatchable` (read from a record whose stored hash is not one) keeps
    /// the hash the store holds, its text as it was: a damaged record is never overwritten with
    /// 64 `f`s. A session the store does not hold yet is stored with that hash.
    case putSession(SceneSession)
    /// Stores the session's `lastActiveAt`, `liveSince` and `failedRestores`, all that changed
    /// since it was last stored (in this batch or an earlier one): a window attached to it (a
    /// resume's bookkeeping for a restart after a crash) or left it. Each store writes those
    /// alone, the rest of the record left as it is (SQLite: its narrow `session_liveness` row;
    /// PostgreSQL: those columns, the revision unchanged). A cluster node, whose revisions count
    /// whole copies, sends a counted `putSession` instead (`Hub.countedRevisions`). For a
    /// session it does not hold a store writes nothing.
    case putSessionLiveness(SessionLiveness)
    /// Deletes the session and everything stored for it, its held drops (`HeldDrop`) included.
    case deleteSession(SessionID)
    case putPreference(PreferenceDomain, keyPath: String, value: JSONValue, version: Int64)
    /// Removes a value; `version` is the domain's version after the removal, kept so versions
    /// never go backwards across a restart.
    case removePreference(PreferenceDomain, keyPath: String, version: Int64)

    // Documents. The log is per document; `snapshotDocument` is how it is compacted.

    /// Stores a new document: its record, and `text` as its snapshot at `record.revision`.
    /// A document with that id must not exist yet (the batch fails).
    case createDocument(DocumentRecord, text: String)
    /// Changes a document's title; nothing happens for an unknown document.
    case renameDocument(DocumentID, title: String)
    /// Appends one operation to the document's log and sets the document's revision to the
    /// operation's, its length to `length` and its modified time to the operation's time. The
    /// document must exist and must not have an operation at that revision yet (the batch fails).
    case appendOperation(DocumentID, StoredOperation, length: Int)
    /// Replaces the document's snapshot with `text` at `revision`, and deletes the logged
    /// operations before `keepFrom` (compaction). Nothing happens for an unknown document.
    /// The text is a rope, shared with the hub's document at no cost; the store reads it out.
    /// `applied` replaces what the document remembers of operations before its log.
    case snapshotDocument(DocumentID, revision: Int64, text: Rope, keepFrom: Int64, applied: AppliedStreams = AppliedStreams())
    /// Deletes the document, its snapshot, its whole log, its versions and its access.
    case deleteDocument(DocumentID)
    /// Keeps a version of the document: its record and `text` (the document's text at
    /// `record.revision`, a rope shared with the hub's document; the store reads it out). After
    /// a checkpoint, the document's checkpoints beyond the newest `keepCheckpoints` are deleted
    /// (named versions are never deleted but with their document). Nothing happens for an
    /// unknown document (deleted meanwhile, perhaps on another node).
    case saveVersion(VersionRecord, text: Rope, keepCheckpoints: Int)
    /// Replaces the document's grants and links (`DocumentAccess`) with these; nothing happens
    /// for an unknown document. A write to its record: other nodes read it with it.
    case putDocumentAccess(DocumentID, DocumentAccess)
    // Request keys (`idempotencyKey`): what a retry of a keyed request is answered with.

    /// Keeps a keyed request's outcome, in the transaction of the change it reports: a single
    /// node's, whose hub holds every record of its own (loaded at start), so a record of the key
    /// already stored is one the hub forgot (past `idempotencyRetentionMs`, or beyond
    /// `maxIdempotencyKeysPerUser`), and is replaced.
    case recordRequest(RequestRecord)
    /// Forgets these records (each only as recorded then, not one recorded anew since): a
    /// cluster node forgot them (past `idempotencyRetentionMs`, or beyond
    /// `maxIdempotencyKeysPerUser`), so a request with one of their keys is a new request
    /// through any node.
    case forgetRequestRecords([RecordedKey])
    /// Forgets the records made before `before`, and each user's beyond the newest
    /// `keepPerUser`: what no node forgot by name (one that stopped meanwhile).
    case pruneRequestRecords(before: Millis, keepPerUser: Int)

    /// A command only a cluster's coordination emits (leases, drag endings, keys checked
    /// against other nodes: `CoordinationCommand`); a single node's store ignores it.
    case coordination(CoordinationCommand)

    /// Writes webhook events to the outbox (`WebhookOutbox`), in the transaction of the change
    /// they report: they commit with it or not at all, and a commit refused (a conflict) writes
    /// none. An entry whose event id is stored for its endpoint already is skipped.
    case enqueueWebhooks([WebhookOutboxEntry])
}

/// How long a shared store keeps a drag's ending: well past its expiry, after which no node
/// accepts a drop of it anyway (`dragLifetimeMs`).
public enum DragEnd {
    public static let keptMs: Millis = 3_600_000
}

/// A preference domain: one user's preferences in a workspace, or the workspace's own.
/// Equal, hashed and ordered by the bytes of its workspace and user (`Identifier`).
public struct PreferenceDomain: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let workspace: String
    /// nil for the workspace domain.
    public let user: String?

    public init(workspace: String, user: String?) {
        self.workspace = workspace
        self.user = user
    }

    public var kind: String { user == nil ? "workspace" : "user" }
    public var description: String { user.map { "user:\($0)@\(workspace)" } ?? "workspace:\(workspace)" }

    public static func == (a: Self, b: Self) -> Bool {
        guard Identifier.equal(a.workspace, b.workspace) else { return false }
        switch (a.user, b.user) {
        case (nil, nil): return true
        case (let x?, let y?): return Identifier.equal(x, y)
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        Identifier.hash(workspace, into: &hasher)
        if let user { Identifier.hash(user, into: &hasher) }
    }

    /// By workspace, then the workspace domain before users' domains, users bytewise.
    public static func < (a: Self, b: Self) -> Bool {
        guard Identifier.equal(a.workspace, b.workspace) else { return Identifier.less(a.workspace, b.workspace) }
        switch (a.user, b.user) {
        case (let x?, let y?): return Identifier.less(x, y)
        case (nil, _?): return true
        default: return false
        }
    }
}

/// A read the hub needs from the store without blocking the service thread. The runtime runs
/// it on the store thread after every batch submitted before it, so it sees them all.
public enum LoadRequest: Sendable, Equatable {
    /// A document to open: its snapshot and the operations from `retention` before it on.
    case document(DocumentID, retention: Int)
    /// A preference domain as stored now: to catch up after a conflicting commit.
    case preferences(PreferenceDomain)
    /// Shared stores: a domain's logged changes after `version`.
    case preferenceChanges(PreferenceDomain, after: Int64)
    /// Shared stores: a document's operations after `revision`.
    case operations(DocumentID, after: Int64)
    /// Shared stores: sessions, claims and document records written after `cursor`.
    case recordChanges(after: Int64)
    /// Shared stores: reserves request keys this node does not hold for `node`, before their
    /// requests are handled (`SharedStore.reserveRequestKeys`). Needs no order with this node's
    /// writes: the hub holds its own keys.
    case reserveRequestKeys([KeyReservation], node: NodeID, staleBefore: Millis)
    /// The records of these request keys, where stored: a keyed write that another node may
    /// have applied before, and that is answered here without a commit (refused, or changing
    /// nothing), is answered from the record if there is one.
    case requestRecords([RequestKeySlot])
    /// Shared stores: these sessions and document records as stored now (nil: not stored), to
    /// undo what a write the store left out had applied in memory.
    case records(sessions: [SessionID], documents: [DocumentID])
    /// A document's versions: a list, a text, or a diff (`VersionRead`), computed here.
    case versions(VersionRead)
    /// Shared stores: the drops held for a session (`HeldDrop`) still kept at `now`, oldest
    /// first: read when a node takes over a session another node held.
    case heldDrops(SessionID, now: Millis)
}

/// What a `LoadRequest` found, delivered back to the hub as `HubEvent.loaded`.
public enum LoadResult: Sendable, Equatable {
    /// The document, nil when the store has no such document; `failure` names what went wrong
    /// when the read failed.
    case document(DocumentID, StoredDocument?, failure: String? = nil)
    /// The domain, nil when nothing is stored for it.
    case preferences(PreferenceDomain, StoredPreferences?, failure: String? = nil)
    /// Nil changes: the log no longer reaches back that far.
    case preferenceChanges(PreferenceDomain, [PreferenceChange]?, failure: String? = nil)
    /// Nil operations: the document is gone or its log was compacted past the revision.
    case operations(DocumentID, [StoredOperation]?, failure: String? = nil)
    case recordChanges(RecordChanges?, failure: String? = nil)
    /// The records found among those asked for (none for a key not stored).
    case requestRecords([RequestKeySlot], [RequestRecord], failure: String? = nil)
    /// What became of each key asked for.
    case requestKeysReserved([KeyReservation], [RequestKeySlot: KeyReservationOutcome], failure: String? = nil)
    /// The records asked for (the ids, and what was read: nil when the read failed).
    case records(sessions: [SessionID], documents: [DocumentID], RecordsRead?, failure: String? = nil)
    /// What a version read found; nil when it failed.
    case versions(VersionRead, VersionRead.Answer?, failure: String? = nil)
    /// The drops held for the session (none when the read failed).
    case heldDrops(SessionID, [HeldDrop], failure: String? = nil)
}
