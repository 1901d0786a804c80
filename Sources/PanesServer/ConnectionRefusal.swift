/// Why the runtime refuses new WebSocket upgrades (503) now: kept as a kind, not as the
/// body's sentence, so which refusal stands (a drain's and a rejoin's over a lost lease's) is
/// decided on the kind, and rewording a body changes nothing else.
enum ConnectionRefusal: Equatable {
    /// The server is draining (a termination signal): for good.
    case draining
    /// The node's lease ended and it rejoins under a new identity (`ServerRuntime.revoked`).
    case rejoining
    /// The node's own clock says its lease is lost, until a renewal holds it again
    /// (`ServerRuntime.refuseWhileLeaseLost`).
    case leaseLost

    /// The 503's body.
    var body: String {
        switch self {
        case .draining: "the server is draining"
        case .rejoining: "this node is rejoining the cluster; retry, or connect to another node"
        case .leaseLost: "this node lost its lease on the database; retry, or connect to another node"
        }
    }
}
