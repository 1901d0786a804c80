/// Durable state. The embedded default is SQLite; the in-memory store serves tests and
/// `--store memory`. Every implementation passes the same conformance tests.
///
/// A store is used from one thread only (the store thread), so implementations need no locks.
public protocol Store: AnyObject {
    /// Everything the hub keeps in memory, read once at start.
    func loadState() throws -> StoredState
    /// Applies the writes in one transaction, in order: when this returns, every persist and
    /// every commit whose outcome is `.committed` is durable; a commit whose channel is no
    /// longer at its base is left out (`.conflict`) without failing the others, and so is a
    /// write that records a request key already recorded (see `StoreCommand.recordRequest`).
    /// When it throws, nothing was applied; but for `CommitOutcomeUnknown`, which says the
    /// transaction may have committed, and that `resolve` must be asked before anything of it
    /// is retried or reported failed.
    func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome]
    /// One document's snapshot and log, for opening it: the operations after
    /// `snapshotRevision - retention`, oldest first. Nil when there is no such document.
    func loadDocument(_ id: DocumentID, retention: Int) throws -> StoredDocument?
    /// Clears what deleted data leaves behind outside the live records (SQLite: folds the
    /// write-ahead log into the database and truncates it). The store thread calls it every
    /// `walCheckpointIntervalMs` and once more at a clean shutdown.
    func checkpoint() throws
    /// One preference domain as stored; nil when nothing is stored for it.
    func loadPreferences(_ domain: PreferenceDomain) throws -> StoredPreferences?
    /// The stored records of these request keys (`StoreCommand.recordRequest`), in no order.
    func loadRequestRecords(_ slots: [RequestKeySlot]) throws -> [RequestRecord]
    /// Whether the transaction an `apply` left unknown (`CommitOutcomeUnknown`) committed.
    /// Throws while that still cannot be told (the database is still out of reach).
    func resolve(_ unknown: CommitOutcomeUnknown) throws -> Bool
    /// The document's versions (`StoreCommand.saveVersion`), newest first; none for an unknown
    /// document.
    func loadVersions(_ document: DocumentID) throws -> [VersionRecord]
    /// One version of the document and its text; nil when the document has no such version.
    func loadVersion(_ document: DocumentID, id: String) throws -> (VersionRecord, String)?
    /// The store's shared side, when several nodes share it (`SharedStore`): what the runtime
    /// needs of a cluster's store (fencing, conflict resolution, reads of other nodes' writes)
    /// is reached through it, never by asking what type the store is. Nil for a single
    /// node's store.
    var shared: (any SharedStore)? { get }
}

extension Store {
    /// A single node's store has no shared side.
    public var shared: (any SharedStore)? { nil }

    /// Stores that keep nothing beside their records have nothing to clear.
    public func checkpoint() throws {}

    /// Stores whose `apply` always knows its outcome never leave one to resolve.
    public func resolve(_ unknown: CommitOutcomeUnknown) throws -> Bool {
        throw unknown
    }

    /// Stores that keep no versions (test doubles) have none.
    public func loadVersions(_ document: DocumentID) throws -> [VersionRecord] { [] }
    public func loadVersion(_ document: DocumentID, id: String) throws -> (VersionRecord, String)? { nil }

    /// Performs a read the hub asked for; a failing read becomes a result naming the failure,
    /// so the hub can answer the requests that waited on it.
    public func perform(_ request: LoadRequest) -> LoadResult {
        switch request {
        case .document(let id, let retention):
            do {
                return .document(id, try loadDocument(id, retention: retention))
            } catch {
                return .document(id, nil, failure: "\(error)")
            }
        case .preferences(let domain):
            do {
                return .preferences(domain, try loadPreferences(domain))
            } catch {
                return .preferences(domain, nil, failure: "\(error)")
            }
        case .preferenceChanges(let domain, let version):
            do {
                return .preferenceChanges(domain, try sharedSide().loadPreferenceChanges(domain, after: version))
            } catch {
                return .preferenceChanges(domain, nil, failure: "\(error)")
            }
        case .operations(let id, let revision):
            do {
                return .operations(id, try sharedSide().loadOperations(id, after: revision))
            } catch {
                return .operations(id, nil, failure: "\(error)")
            }
        case .recordChanges(let cursor):
            do {
                return .recordChanges(try sharedSide().loadRecordChanges(after: cursor))
            } catch {
                return .recordChanges(nil, failure: "\(error)")
            }
        case .requestRecords(let slots):
            do {
                return .requestRecords(slots, try loadRequestRecords(slots))
            } catch {
                return .requestRecords(slots, [], failure: "\(error)")
            }
        case .reserveRequestKeys(let keys, let node, let staleBefore):
            do {
                return .requestKeysReserved(keys, try sharedSide().reserveRequestKeys(keys, node: node, staleBefore: staleBefore))
            } catch {
                return .requestKeysReserved(keys, [:], failure: "\(error)")
            }
        case .versions(let read):
            do {
                return .versions(read, try read.perform(self))
            } catch {
                return .versions(read, nil, failure: "\(error)")
            }
        case .heldDrops(let session, let now):
            do {
                return .heldDrops(session, try sharedSide().loadHeldDrops(session, now: now))
            } catch {
                return .heldDrops(session, [], failure: "\(error)")
            }
        case .records(let sessions, let documents):
            do {
                return .records(sessions: sessions, documents: documents,
                                try sharedSide().loadRecords(sessions: sessions, documents: documents))
            } catch {
                return .records(sessions: sessions, documents: documents, nil, failure: "\(error)")
            }
        }
    }

    /// The shared side of this store, for reads only a cluster's hub asks for.
    private func sharedSide() throws -> any SharedStore {
        guard let shared else { throw NotSharedError() }
        return shared
    }

    /// Applies persists only, in one transaction: for tests and tools.
    public func apply(_ commands: [StoreCommand]) throws {
        _ = try apply([StoreWrite.persist(commands)])
    }
}

/// A cluster read asked of a store that no other node shares: a bug in the wiring.
struct NotSharedError: Error, CustomStringConvertible {
    var description: String { "this store is not shared by several nodes" }
}

/// What the hub loads at start.
public struct StoredState: Sendable, Equatable {
    public var sessions: [SceneSession]
    public var preferences: [PreferenceDomain: StoredPreferences]
    /// Every document's record (not its text), sorted by id.
    public var documents: [DocumentRecord]
    /// Shared stores: the record sequence this state includes, to follow changes from
    /// (`SharedStore.loadRecordChanges`); 0 for a single node's store.
    public var recordCursor: Int64
    /// Shared stores: who holds each session live now.
    public var claims: [SessionID: SessionClaim]
    /// Outcomes of keyed requests (`StoreCommand.recordRequest`), oldest first.
    public var requestRecords: [RequestRecord]
    /// Each document's grants and links, for those that have any.
    public var access: [DocumentID: DocumentAccess] = [:]
    /// The deployment's secret for deriving keyed links' tokens (`DocumentRights.keyedToken`):
    /// 32 random bytes made once by the store's migration and shared by every node; empty when
    /// the store has none (keyed links' tokens are then random, and a retry makes another link).
    public var linkSecret: [UInt8] = []

    public init(sessions: [SceneSession] = [], preferences: [PreferenceDomain: StoredPreferences] = [:],
                documents: [DocumentRecord] = [], recordCursor: Int64 = 0, claims: [SessionID: SessionClaim] = [:],
                requestRecords: [RequestRecord] = [], access: [DocumentID: DocumentAccess] = [:],
                linkSecret: [UInt8] = []) {
        self.access = access
        self.linkSecret = linkSecret
        self.sessions = sessions
        self.preferences = preferences
        self.documents = documents
        self.recordCursor = recordCursor
        self.claims = claims
        self.requestRecords = requestRecords
    }
}

/// One domain's values and the domain's version counter.
public struct StoredPreferences: Sendable, Equatable {
    public var version: Int64
    public var values: [String: VersionedValue]

    public init(version: Int64 = 0, values: [String: VersionedValue] = [:]) {
        self.version = version
        self.values = values
    }
}

public struct VersionedValue: Sendable, Equatable {
    public var value: JSONValue
    public var version: Int64

    public init(value: JSONValue, version: Int64) {
        self.value = value
        self.version = version
    }
}
