/// A write to one ordered channel (a preference domain, a document's log) that the store
/// applies only if the channel is still at `base`: compare-and-set on the channel's version.
///
/// The hub never applies such a write before the store has committed it. On one node the
/// channel never moves under the hub, so a commit always succeeds; with several nodes on one
/// database another node may have written first, and the outcome says so (`conflict`): the
/// hub then catches the channel up and tries again. This is how every node agrees on one
/// order per channel.
public struct Commit: Sendable, Equatable {
    public let id: CommitID
    public let channel: Channel
    /// The channel's version the write was made on; its commands take it to `base + n`.
    public let base: Int64
    public let commands: [StoreCommand]

    public init(id: CommitID, channel: Channel, base: Int64, commands: [StoreCommand]) {
        self.id = id
        self.channel = channel
        self.base = base
        self.commands = commands
    }
}

/// Numbers the hub's commits so their outcomes find their way back.
public struct CommitID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "commit \(rawValue)" }
}

/// A sequence of changes with a version that every node orders the same way.
public enum Channel: Hashable, Sendable, CustomStringConvertible {
    /// A preference domain; its version is the domain's version.
    case preferences(PreferenceDomain)
    /// A document's operation log; its version is the document's revision.
    case document(DocumentID)
    /// A channel only a cluster orders (a session's lease, a drag's ending, a session's record):
    /// the coordination seam's (`CoordinationChannel`).
    case coordination(CoordinationChannel)

    public var description: String {
        switch self {
        case .preferences(let domain): "preferences:\(domain)"
        case .document(let id): "document:\(id)"
        case .coordination(let channel): channel.description
        }
    }
}

/// What became of a commit.
public enum CommitOutcome: Sendable, Equatable {
    /// Durable: the hub applies it and answers.
    case committed
    /// The channel was no longer at `base`: nothing was written; catch up and retry.
    case conflict
    /// A conflict on a document's log that the store answered with what the hub was missing:
    /// the operations committed after `base`, oldest first, following on from it with none
    /// left out, read in the same transaction. Nothing was written. The hub applies them and
    /// retries at once, instead of spending a read of its own on them (shared stores; `conflict`
    /// when the log no longer reaches back to `base`).
    case behind([StoredOperation])
    /// The store could not commit it (the database is unreachable, say): nothing was written;
    /// the requests get a retryable error.
    case failed(String)
    /// A request key the commit records is recorded already (another attempt of the request,
    /// through another node, was applied first): nothing was written; the records found tell
    /// those requests what they were answered.
    case recorded([RequestRecord])
    /// Whether the commit's transaction committed could not be found out within
    /// `commitOutcomeTimeoutMs` (the connection was lost around COMMIT and the database is
    /// still out of reach). The store keeps asking: the same commit's real outcome
    /// (`committed`, or `failed` when it did not) is reported later, once known.
    case unknown(String)
}

/// Thrown by `Store.apply` when the store cannot tell whether the transaction committed: the
/// connection was lost while COMMIT was under way, and asking the database failed too. Nothing
/// may be retried or reported failed on the strength of it; `Store.resolve` finds out later.
public struct CommitOutcomeUnknown: Error, Sendable, CustomStringConvertible {
    /// How the store recognises the transaction afterwards (PostgreSQL: its `txid_current()`).
    public let transaction: Int64
    /// The commits' outcomes if the transaction did commit (a conflict stays a conflict).
    public let outcomes: [CommitID: CommitOutcome]
    /// The sessions whose claims found drops held for them (`AppliedWrites.heldDropsFound`),
    /// if the transaction did commit: reported with the outcomes once it is known to have.
    public let heldDropsFound: [SessionID]
    public let reason: String

    public init(transaction: Int64, outcomes: [CommitID: CommitOutcome], heldDropsFound: [SessionID] = [],
                reason: String) {
        self.transaction = transaction
        self.outcomes = outcomes
        self.heldDropsFound = heldDropsFound
        self.reason = reason
    }

    public var description: String { "the outcome of transaction \(transaction) is unknown: \(reason)" }
}

/// One unit of work for the store, in the order the hub emitted it.
public enum StoreWrite: Sendable, Equatable {
    /// Changes with a single writer (sessions, document records): always applied.
    case persist([StoreCommand])
    /// A compare-and-set write to a channel.
    case commit(Commit)
    /// A message to other nodes, sent when the transaction commits (shared stores; a single
    /// node's store has nobody to tell and drops it).
    case signal(NodeSignal)
}
