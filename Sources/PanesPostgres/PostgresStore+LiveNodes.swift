// Threading: as the rest of the store, the thread that owns it (the heartbeat, or the listener on
// its own connection).
public import PanesCore

/// Which nodes' leases run now, on the database's clock: the heartbeat asks once a beat (their
/// count is each node's share of the API's rates; the hub learns of the others), and the
/// listener on its own connection each time it has subscribed (`ChangeNotice.nodesAlive`).
extension PostgresStore {
    /// Sorted by id (`NodeLeases.liveNodes`).
    public func liveNodes() throws -> [NodeID] { try Self.liveNodes(on: connection) }

    static func liveNodes(on connection: PostgresConnection) throws -> [NodeID] {
        let rows = try connection.query(Self.liveNodesSQL)
        return (0..<rows.count).compactMap { rows.text($0, 0).map(NodeID.init) }
    }

    private static let liveNodesSQL =
        "SELECT id FROM nodes WHERE lease_until >= (extract(epoch FROM now()) * 1000)::bigint ORDER BY id"
}
