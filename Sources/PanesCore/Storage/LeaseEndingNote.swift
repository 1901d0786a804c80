/// Something a node check did, or could not do, to end a lapsed node's lease (its lease ran out
/// on the database's clock, but a transaction of that node still holds its row), for the
/// heartbeat to log (`NodeLeases.takeLeaseEndingNotes`).
public enum LeaseEndingNote: Sendable, Equatable {
    /// The store ended `count` of the node's connections to it, whose transactions held up the
    /// end of its lease (PostgreSQL: `pg_terminate_backend`).
    case connectionsEnded(NodeID, count: Int)
    /// The store refused to end them (`reason`, the database's words: this node's role may not
    /// signal that node's backends). The lease ends once those transactions end by themselves.
    case connectionsNotEnded(NodeID, reason: String)
}
