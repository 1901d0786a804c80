/// Every scene session the hub holds, live or not, indexed by owner, with when each becomes
/// idle enough to discard.
///
/// Its tables are private: a session put here is indexed by its owner and given an idle
/// deadline, and one removed leaves the index, so `ids(of:)` and the switcher's list always
/// agree with the sessions held. A session's owner never changes (`SceneSession.owner`).
struct Sessions: Sendable {
    /// The sessions, each kept once (`DenseTable`: a session record is over 200 bytes).
    private var byID = DenseTable<SessionID, SceneSession>()
    /// Each user's sessions, as slots of `byID` (4 bytes an entry instead of a 16-byte string).
    private var byOwner: [OwnerKey: Set<DenseTable<SessionID, SceneSession>.Slot>] = [:]
    /// Sessions by when they become idle enough to discard (entries go stale as sessions are
    /// used or discarded; `popIdle` hands them out and the hub looks again). Entries name a
    /// slot of `byID` (16 bytes an entry, 32 with the id): a slot given to another session
    /// since hands out that session, which the hub looks at as it looks at any (its own
    /// entries are never later than its idle deadline, so it is due whenever such an entry
    /// finds it idle); a slot held by none is skipped, as a discarded session's entry was.
    private var idleDeadlines = DeadlineQueue<DenseTable<SessionID, SceneSession>.Slot>()
    /// `sessionMaxIdleMs`: how long after its last activity a session without a live scene
    /// may be discarded.
    let maxIdle: Millis

    init(maxIdle: Millis) {
        self.maxIdle = maxIdle
    }

    subscript(id: SessionID) -> SceneSession? { byID[id] }

    /// How many sessions are held.
    var count: Int { byID.count }

    /// The user's sessions, in no particular order.
    func ids(of owner: OwnerKey) -> Set<SessionID> { Set((byOwner[owner] ?? []).map { byID[slot: $0].id }) }

    /// The user's sessions, in no particular order.
    func sessions(of owner: OwnerKey) -> [SceneSession] { (byOwner[owner] ?? []).map { byID[slot: $0] } }

    /// How many sessions the user has.
    func count(of owner: OwnerKey) -> Int { byOwner[owner]?.count ?? 0 }

    /// The sessions of every user of the workspace (compared by bytes), in no particular order.
    func ids(inWorkspace workspace: String) -> [SessionID] {
        byOwner.filter { Identifier.equal($0.key.workspace, workspace) }.values.joined().map { byID[slot: $0].id }
    }

    /// Keeps a new session: indexed by its owner, idle `maxIdle` after its last activity.
    /// - Parameter attaching: a scene attaches to it at once (a `connect` that makes it): it gets
    ///   no idle deadline now, as a live session is never discarded for idleness; its scene's end
    ///   queues one (`becameIdle`). Every idle scene of a burst of new ones held an entry here
    ///   (16 bytes, ~26 in an array grown to a power of two, issue 27) that only came due
    ///   `sessionMaxIdleMs` later, to be skipped.
    mutating func insert(_ session: SceneSession, attaching: Bool = false) {
        let (slot, previous) = byID.put(session)
        if let previous, previous.owner != session.owner {
            // An identifier used again (only sequential test identifiers do): the index follows.
            unindex(slot, of: previous.owner)
        }
        byOwner[session.owner, default: []].insert(slot)
        if !attaching { idleDeadlines.push(slot, at: session.lastActiveAt + maxIdle) }
    }

    /// Idle deadlines queued, stale ones included (for tests).
    var idleDeadlineCount: Int { idleDeadlines.count }

    /// Keeps the session, in place of the copy held (same owner); one not held yet is
    /// inserted (`insert`).
    mutating func put(_ session: SceneSession) {
        let replaced = byID.modify(session.id) { held in
            guard held.owner == session.owner else { return false }
            held = session
            return true
        }
        if replaced != true { insert(session) }
    }

    /// Changes a held session in place (its owner stays); nil when it is not held.
    @discardableResult
    mutating func update<R>(_ id: SessionID, _ body: (inout SceneSession) -> R) -> R? {
        byID.modify(id, body)
    }

    /// Where a held session is: for `update(_:hint:_:)` soon after, within one event.
    func slot(of id: SessionID) -> DenseTable<SessionID, SceneSession>.Slot? { byID.slot(of: id) }

    /// `update(_:_:)` through a slot that held the session a moment ago (`slot(of:)`), checked
    /// to hold it still: a resume finds its session to prove the secret and changes it when it
    /// attaches, and hashed its id for each (issue 27).
    @discardableResult
    mutating func update<R>(_ id: SessionID, hint: DenseTable<SessionID, SceneSession>.Slot?,
                            _ body: (inout SceneSession) -> R) -> R? {
        byID.modify(id, hint: hint, body)
    }

    /// Forgets a session; it leaves its owner's index. Returns what it was.
    mutating func remove(_ id: SessionID) -> SceneSession? {
        guard let (slot, session) = byID.remove(id) else { return nil }
        unindex(slot, of: session.owner)
        return session
    }

    private mutating func unindex(_ slot: DenseTable<SessionID, SceneSession>.Slot, of owner: OwnerKey) {
        byOwner[owner]?.remove(slot)
        if byOwner[owner]?.isEmpty == true { byOwner[owner] = nil }
    }

    /// The session's scene ended: it becomes idle `maxIdle` after its last activity.
    mutating func becameIdle(_ session: SceneSession) {
        // One not held would be skipped when its entry came up.
        guard let slot = byID.slot(of: session.id) else { return }
        idleDeadlines.push(slot, at: session.lastActiveAt + maxIdle)
    }

    /// Sessions whose idle deadline has come, with that deadline: each is looked at again
    /// (it may have been used since, or be gone).
    mutating func popIdle(now: Millis) -> [(deadline: Millis, id: SessionID)] {
        idleDeadlines.popDue(now: now).compactMap { entry in
            byID.value(inSlot: entry.key).map { (entry.deadline, $0.id) }
        }
    }

    /// Looks at the session again at `at` (it was used after its deadline was queued).
    mutating func idleAgain(_ id: SessionID, at: Millis) {
        guard let slot = byID.slot(of: id) else { return }
        idleDeadlines.push(slot, at: at)
    }

    /// The next idle deadline (wall clock).
    var nextIdleDeadline: Millis? { idleDeadlines.nextDeadline }
}
