// Threading: used by one thread, the heartbeat's (`ClusterNode`), with its one connection;
// only `interruptHeartbeatWait` is called from other threads (it writes to a pipe). That is
// why the class is `@unchecked Sendable`.
public import PanesCore

/// The nodes' leases in PostgreSQL and nothing else: the handle a node's heartbeat keeps, on a
/// connection of its own, so that no slow group commit on the store thread delays a renewal.
/// It cannot write or read the node's state, and it does not migrate the database: open the
/// node's `PostgresStore` first, which does.
public final class PostgresLeases: NodeLeases, @unchecked Sendable {
    private let store: PostgresStore

    /// Connects to the database at `url` (as `PostgresStore.init(url:)` takes it).
    public init(url: String) throws {
        store = try PostgresStore(url: url, migrating: false)
    }

    public func register(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        try store.register(node: node, leaseMs: leaseMs)
    }

    public func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        try store.heartbeat(node: node, leaseMs: leaseMs)
    }

    public func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        try store.checkNodes(node: node, leaseMs: leaseMs)
    }

    public func liveNodes() throws -> [NodeID] {
        try store.liveNodes()
    }

    public func awaitHeartbeatConnection(timeoutMs: Int) -> Bool? {
        store.awaitHeartbeatConnection(timeoutMs: timeoutMs)
    }

    public func interruptHeartbeatWait() {
        store.interruptHeartbeatWait()
    }

    public func takeLeaseEndingNotes() -> [LeaseEndingNote] {
        store.takeLeaseEndingNotes()
    }

    /// Closes the connection now (the liveness lock goes with it).
    public func close() {
        store.close()
    }
}
