/// Something a node check did, or could not do, to end a lapsed node's lease (its lease ran out
/// on the database's clock, but a transaction of that node still holds its row), for the
/// heartbeat to log (`NodeLeases.takeLeaseEndingNotes`).
public enum LeaseEndingNote: Sendable, Equatable {
    /// The store ended `count` of the node's connections to it, whose transactions held up the
    /// end of its lease (PostgreSQL: `pg_terminate_backend`).
    case connectionsEnded(NodeID, count: Int)
    /// The store may not end (some of) them: this node's role may not signal that node's
    /// backends (`reason`: PostgreSQL's SQLSTATE 42501, insufficient_privilege, first, then what
    /// it says). The lease ends once those transactions end by themselves.
    case connectionsNotEnded(NodeID, reason: String)
    /// Ending them failed for another reason (`error`, the database's words: a statement
    /// timeout set on the role, a table it may not read…); the check goes on as if none were.
    case connectionsEndingFailed(NodeID, error: String)
}
