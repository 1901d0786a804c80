/// Drags in flight, and ended ones until they would have expired, so a second drop is told
/// "already dropped" rather than "unknown".
struct DragState: Sendable {
    enum Phase: Sendable, Equatable {
        /// `expiring`: its lifetime ran out on the node it began on, which is asking the store
        /// whether a drop through another node ended it first (`Hub.expiryCommitted`).
        case pending, dropped, cancelled, expiring
    }

    struct Drag: Sendable {
        let id: String
        let owner: OwnerKey
        let source: SceneID
        let sourceSession: SessionID
        let items: [DragItem]
        let expiresAt: Millis
        var phase: Phase = .pending
        /// The node the drag began on, when that is another node of a cluster: it alone
        /// talks to the source scene.
        var origin: NodeID? = nil
    }

    var drags: [Identifier: Drag] = [:]
    /// When each drag expires.
    var deadlines = DeadlineQueue<String>()
}
