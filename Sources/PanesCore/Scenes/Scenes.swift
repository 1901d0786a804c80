/// The live scenes: each one connection attached to one session, indexed by session and by
/// owner, with each user's scenes counted by activation state (the app state without a scan)
/// and when each scene's token stops being accepted.
///
/// Its tables are private, and it keeps these true: a session has at most one live scene; a
/// scene attached is indexed by its session and its owner and counted in its state, and one
/// detached leaves every index and count; a state changed (`setState`, `update`) moves the
/// count with it. Service scenes (one HTTP API request each, `Hub+API.swift`) belong to no
/// session and are in none of the indexes.
struct Scenes: Sendable {
    /// The scenes, each kept once (`DenseTable`: an idle scene is mostly its table entries).
    private var byID = DenseTable<SceneID, Scene>()
    /// The live scene of each session (its slot in `byID`, found by the scene's session); at
    /// most one.
    private var live = SlotIndex<SessionID>()
    /// Each user's scenes, their count by state and their app state, in one entry: an attach
    /// or a settle hashes the owner once. An entry is kept while the user has a scene here or
    /// an app state not yet settled to "not running".
    private var byOwner: [OwnerKey: OwnerScenes] = [:]
    /// When each scene's token stops being accepted: its expiry plus the clock skew allowed.
    /// Entries outlive refreshes and ended scenes; `expiredTokens` skips and sheds them.
    private var tokenExpiries = DeadlineQueue<SceneID>()
    /// `jwtClockSkewMs`: a scene lives as long as its token would verify.
    let tokenSkew: Millis

    init(tokenSkew: Millis) {
        self.tokenSkew = tokenSkew
    }

    subscript(id: SceneID) -> Scene? { byID[id] }

    /// How many scenes there are (service scenes too).
    var count: Int { byID.count }

    /// Every scene (service scenes too), in no particular order.
    var all: some Sequence<Scene> { byID.values }

    /// The scenes by id, read-only: one table, cheap to copy, for a lookup from a closure that
    /// cannot capture the hub (a copy of `Scenes` itself would retain every table).
    var byIDTable: DenseTable<SceneID, Scene> { byID }

    /// The session's live scene here, if it has one.
    func liveID(of session: SessionID) -> SceneID? { liveSlot(of: session).map { byID[slot: $0].id } }

    /// The session's live scene here, if it has one.
    func live(of session: SessionID) -> Scene? { liveSlot(of: session).map { byID[slot: $0] } }

    /// The sessions with a live scene here, in no particular order.
    var liveSessions: [SessionID] { live.slots.map { byID[slot: $0].session } }

    /// Whether the session has a live scene here.
    func isLive(_ session: SessionID) -> Bool { liveSlot(of: session) != nil }

    /// The slot of the session's live scene.
    private func liveSlot(of session: SessionID) -> DenseTable<SceneID, Scene>.Slot? {
        live.slot(of: session) { byID[slot: $0].session }
    }

    /// The user's scenes, in no particular order.
    func ids(of owner: OwnerKey) -> Set<SceneID> { Set((byOwner[owner]?.slots ?? []).map { byID[slot: $0].id }) }
    /// Whether the user has a scene here.
    func hasScenes(of owner: OwnerKey) -> Bool { !(byOwner[owner]?.slots.isEmpty ?? true) }
    /// The user's scenes, read through their slots (no id hashed again).
    func scenes(of owner: OwnerKey) -> [Scene] { (byOwner[owner]?.slots ?? []).map { byID[slot: $0] } }

    /// The users with a scene here, in order.
    var owners: [OwnerKey] { byOwner.filter { !$0.value.slots.isEmpty }.keys.sorted() }

    // MARK: Attaching and detaching

    /// Makes a new scene its session's live scene: `make` builds it around the `SceneUser` it
    /// holds, the one its owner's scenes share when that holds `userName` and `clientVersion` by
    /// bytes (an idle scene keeps 8 bytes of it instead of four strings), else a new one. The
    /// session must have no live scene (the hub detaches or refuses a live one before it
    /// attaches another; were it broken in a release build, the first scene would stay the
    /// session's live one).
    /// - Parameter settling: also bring the owner's app state up to date, as `settleAppState`
    ///   would after it, in the same look-up of the owner (a resume hashed the owner's two
    ///   strings twice, ~700 instructions each, issue 27).
    /// - Returns: the app state's change when `settling`; nil when it did not change.
    @discardableResult
    mutating func attach(owner: OwnerKey, userName: String, clientVersion: String, settling: Bool = false,
                         _ make: (SceneUser) -> Scene) -> AppStateChange? {
        var change: AppStateChange?
        let (slot, scene) = byOwner[owner, default: OwnerScenes()].attach(
            owner: owner, name: userName, clientVersion: clientVersion, into: &byID, settling: settling, change: &change, make)
        assert(scene.owner == owner, "a scene is attached under its own owner")
        let byID = self.byID
        let live = live.slot(of: scene.session, orInsert: slot) { byID[slot: $0].session }
        assert(live == slot, "a session has at most one live scene")
        if let expiresAt = scene.tokenExpiresAt { tokenExpiries.push(scene.id, at: expiresAt + tokenSkew) }
        return change
    }

    /// Ends the scene: it leaves every index and count. Returns what it was.
    mutating func detach(_ id: SceneID) -> Scene? {
        // The live index reads each key from `byID`: the scene leaves it while still there.
        guard let slot = byID.slot(of: id) else { return nil }
        let scene = byID[slot: slot]
        if liveSlot(of: scene.session) == slot {
            let byID = self.byID
            live.remove(scene.session) { byID[slot: $0].session }
        }
        byID.remove(id)
        if let index = byOwner.index(forKey: scene.owner) {
            byOwner.values[index].remove(slot, in: scene.state)
            // The app state it leaves is settled later (`settleAppState`), which drops the entry.
            if byOwner.values[index].isUnused { byOwner.remove(at: index) }
        }
        return scene
    }

    /// A service scene, for one HTTP API request: in no session and no index.
    mutating func addService(_ scene: Scene) {
        // Over a live scene's entry it would free, at `removeService`, a slot the per-user and
        // live-scene indexes still name, and the next attach would reuse it for another scene.
        precondition(byID.slot(of: scene.id) == nil, "a service scene takes an id a scene holds")
        byID.updateValue(scene)
    }

    /// The service scene's request was answered. Returns what it was.
    mutating func removeService(_ id: SceneID) -> Scene? {
        byID.removeValue(forKey: id)
    }

    // MARK: Changing a scene

    /// Changes a scene in place; its state's count and its token's expiry follow. Nil when
    /// there is no such scene.
    @discardableResult
    mutating func update<R>(_ id: SceneID, _ body: (inout Scene) -> R) -> R? {
        guard let (result, before, after) = byID.modify(id, { scene in
            let before = (state: scene.state, expiresAt: scene.tokenExpiresAt)
            return (body(&scene), before, scene)
        }) else { return nil }
        if after.state != before.state, liveID(of: after.session) == id,
           let owner = byOwner.index(forKey: after.owner) {
            byOwner.values[owner].counts.remove(before.state)
            byOwner.values[owner].counts.add(after.state)
        }
        if let expiresAt = after.tokenExpiresAt, expiresAt != before.expiresAt {
            tokenExpiries.push(id, at: expiresAt + tokenSkew)
        }
        return result
    }

    /// Moves the scene to `state`. Returns the scene as it is now and the state it left; nil
    /// when there is no such scene.
    mutating func setState(_ state: ActivationState, of id: SceneID) -> (scene: Scene, previous: ActivationState)? {
        update(id) { scene in
            let previous = scene.state
            scene.state = state
            return (scene, previous)
        }
    }

    // MARK: App state

    /// The user's app state: the highest state of their scenes here; nil when none runs.
    func appState(of owner: OwnerKey) -> ActivationState? { byOwner[owner]?.appState }

    /// Brings the user's app state up to date with their scenes' states.
    /// - Returns: the change, for the log; nil when it did not change.
    mutating func settleAppState(of owner: OwnerKey) -> AppStateChange? {
        guard let index = byOwner.index(forKey: owner), let change = byOwner.values[index].settle() else { return nil }
        if byOwner.values[index].isUnused { byOwner.remove(at: index) }
        return change
    }

    // MARK: Token expiries

    /// The scenes whose token is no longer accepted at `now` (each once; a scene whose token
    /// was refreshed since its entry was queued is not among them).
    mutating func expiredTokens(now: Millis) -> [SceneID] {
        var expired: [SceneID] = []
        for (_, id) in tokenExpiries.popDue(now: now) {
            guard let expiresAt = byID[id]?.tokenExpiresAt, expiresAt + tokenSkew <= now else { continue }
            expired.append(id)
        }
        // Stale entries (refreshed or ended scenes) pile up between expiries; rebuild now and then.
        if tokenExpiries.count > 2 * byID.count + 1_024 {
            tokenExpiries = DeadlineQueue()
            for scene in byID.values {
                if let expiresAt = scene.tokenExpiresAt { tokenExpiries.push(scene.id, at: expiresAt + tokenSkew) }
            }
        }
        return expired
    }

    /// The next token expiry (wall clock).
    var nextTokenDeadline: Millis? { tokenExpiries.nextDeadline }
}
