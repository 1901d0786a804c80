/// Drags in flight, and ended ones until they would have expired, so a second drop is told
/// "already dropped" rather than "unknown".
struct DragState: Sendable {
    enum Phase: Sendable, Equatable {
        /// `expiring`: its lifetime ran out on the node it began on, which is asking the store
        /// whether a drop through another node ended it first (`Hub.expiryCommitted`).
        /// `unsettled`: a drop through another node ended it, and that node has not said where
        /// its items went; the node it began on settles it after `Hub.recoveryWait` unless it hears
        /// (`Hub.recoverDrop`).
        case pending, dropped, cancelled, expiring, unsettled
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
        /// While `unsettled`: when it is settled as returned, unless heard of before.
        var recoverAt: Millis? = nil
    }

    private var drags: [Identifier: Drag] = [:]
    /// When each drag is looked at again: its expiry, or a later time for an ended one kept.
    private var deadlines = DeadlineQueue<String>()

    subscript(id: String) -> Drag? { drags[id] }

    /// The next time a drag is due (`popDue(now:)`).
    var nextDeadline: Millis? { deadlines.nextDeadline }

    /// A drag begun here, or heard of from the node it began on: kept until it expires.
    mutating func add(_ drag: Drag) {
        drags[drag.id] = drag
        deadlines.push(drag.id, at: drag.expiresAt)
    }

    mutating func setPhase(_ phase: Phase, of id: String) {
        drags[id]?.phase = phase
    }

    /// A drag dropped through another node whose items nobody has settled yet: settled here as
    /// returned at `at` (`Hub.recoverDrop`), unless its `dragEnded` comes first.
    mutating func awaitSettling(_ id: String, recoverAt at: Millis) {
        guard drags[id] != nil else { return }
        drags[id]?.phase = .unsettled
        drags[id]?.recoverAt = at
        deadlines.push(id, at: at)
    }

    /// The same for a drag whose entry may be gone already (its expiry found it dropped here and
    /// removed it): put back first, so that its node still settles it.
    mutating func awaitSettling(_ drag: Drag, recoverAt at: Millis) {
        if drags[drag.id] == nil { drags[drag.id] = drag }
        awaitSettling(drag.id, recoverAt: at)
    }

    /// Keeps an ended drag's entry until `at`, when it is looked at again.
    mutating func keep(_ id: String, until at: Millis) {
        deadlines.push(id, at: at)
    }

    mutating func remove(_ id: String) {
        drags[id] = nil
    }

    /// The drags whose time has come, in deadline order (one may come more than once; each is
    /// looked up again when handled).
    mutating func popDue(now: Millis) -> [String] {
        deadlines.popDue(now: now).map(\.key)
    }
}
