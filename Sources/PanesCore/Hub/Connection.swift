/// A transport connection as the hub tracks it, before and after it becomes a scene.
struct Connection: Sendable {
    enum Phase: Sendable, Equatable {
        /// Opened; only `connect` is accepted.
        case awaitingConnect
        /// Its `connect` is being answered and waits: for a ping of the session's live scene (a
        /// probe), a claim of a lease, a holder on another node, or a request key's reservation.
        /// The session is the one it waits on (empty when it waits on no session).
        case answering(SessionID)
        case scene(SceneID)
        /// Told to close; requests are ignored. Keeps the scene, if any, until the socket is gone.
        case closing(SceneID?)
    }

    let id: ConnectionID
    /// Where it comes from, for the limit on failed authentications (`AuthFailureLimiter`).
    let peer: String?
    var phase: Phase = .awaitingConnect
    /// Its rate limit's tokens; the rate and burst are the settings', passed to `Connections.admit`
    /// (kept once, not in each of 10,000 idle connections).
    var bucket: TokenBucket.Level
    // The requests that come while `answering` are kept beside the table (`Connections.hold`):
    // an empty array here took 8 of every idle scene's bytes (72 → 64).
}

/// A `connect` waiting for a liveness probe of the session's current scene.
struct PendingConnect: Sendable {
    let connection: ConnectionID
    let requestID: RequestID
    let request: ConnectRequest
    let identity: Authenticator.Identity
    let handedOver: [Activity]
    var deadline: Millis
    /// Past its deadline while another node holds the session: the node check (its number)
    /// that decides between taking the session over (that node is gone) and a fork.
    var decidingCheck: Int?
    /// Past its deadline while the node holding the session let its lease run out without its
    /// end being seen (`awaitHolderLeaseEnd`): how long it waits for that end.
    var leaseEndDeadline: Millis?
}

extension Connection: TableRecord {
    var tableKey: ConnectionID { id }
}
