/// Why a `connect` naming a held session was given a new session forked from it rather than the
/// session itself (`Hub.fork`): each is this node's judgement that another window lives on the
/// session. Logged with every fork, with what the node knew of the session's holder then.
enum ForkReason: String, Sendable {
    /// The session's scene on this node answered the ping (`pongReceived`).
    case scenePonged
    /// The node holding the session said its window answered the ping (`NodeSignal.Kind.live`).
    case holderAnsweredLive
    /// The connect's deadline passed and a node check made then found the holder's lease
    /// running: alive, its window silent (`resolvePendingConnects`).
    case holderAliveAtDeadline
    /// Another connect waiting for the session resumed it first: its scene is live here now.
    case liveHere
    /// Another connect waiting for the session resumed it first: its claim is being written.
    case claimInFlight
    /// The session's claim committed after a scene of it attached here meanwhile (`claimCommitted`).
    case liveWhenClaimed
}
