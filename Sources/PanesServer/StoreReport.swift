// Threading: values, made on the store thread and read on the service thread.
import PanesCore

/// What one transaction did: persists up to `durable` are on disk, and each commit has its outcome.
struct StoreReport: Sendable {
    var durable: UInt64?
    var outcomes: [(CommitID, CommitOutcome)]
    /// Sessions the transaction's claims found drops held for
    /// (`AppliedWrites.heldDropsFound`), handed to the hub before the outcomes.
    var heldDropsFound: [SessionID] = []
    /// When the transaction became durable (monotonic nanoseconds), to time the fan-out.
    var committedAt: UInt64 = 0
}

/// What the store thread does when a transaction fails.
enum StoreFailurePolicy: Sendable, Equatable {
    /// An embedded store (SQLite): a few quick retries, then the process exits.
    case fatal
    /// A shared store (PostgreSQL): commits fail, persists are retried from `minBackoffMs`,
    /// doubling up to `maxBackoffMs`, until the database is back; at shutdown they are given
    /// up after `shutdownGiveUpMs` (they were never acknowledged).
    case stall(minBackoffMs: Int, maxBackoffMs: Int, shutdownGiveUpMs: Int)

    /// The shared store's defaults, as the README lists them.
    static let sharedStore = StoreFailurePolicy.stall(minBackoffMs: 50, maxBackoffMs: 2_000, shutdownGiveUpMs: 5_000)
}

/// Why a transaction could not be committed: the store's last error, as text, whether it
/// may have committed after all, and whether the node's lease had ended.
struct StoreApplyFailure: Error, CustomStringConvertible {
    var reason: String
    /// Set when the store cannot tell whether the transaction committed.
    var unknown: CommitOutcomeUnknown?
    /// Set when the node's lease had ended (`NodeRevoked`): nothing was applied.
    var revoked: NodeID?
    var description: String { reason }
}
