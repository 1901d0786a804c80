/// The transport connections the hub tracks, before and after each becomes a scene.
///
/// Its table is private: a connection is opened, moves through its phases (`setPhase`,
/// `markClosing`; once closing it stays closing), holds the requests that come behind its
/// `connect`, spends its rate limit, and is removed when its socket is gone; each change is made
/// in place.
struct Connections: Sendable {
    /// The connections, each kept once (`DenseTable`).
    private var byID = DenseTable<ConnectionID, Connection>()
    /// Requests that came while a connection was `answering`, in order, handled once its
    /// `connect` is answered (`hold`, `takeHeld`): only connections holding any have an entry.
    private var held: [ConnectionID: [ClientRequest]] = [:]

    /// What to do with a frame that arrived on a connection (`admit`).
    enum Admission: Equatable {
        /// No such connection (it closed meanwhile): nothing.
        case unknown
        /// Told to close: its requests are ignored.
        case closing
        /// Handle it, or refuse it for its rate limit when `allowed` is false; `phase` is the
        /// connection's, read in the same look-up (`Hub.dispatch` looked it up again).
        case admitted(allowed: Bool, retryAfterMs: Int, phase: Connection.Phase)
    }

    subscript(id: ConnectionID) -> Connection? { byID[id] }

    var isEmpty: Bool { byID.isEmpty }
    var count: Int { byID.count }

    /// Whether the connect timeout no longer concerns the connection: it is gone, or a scene. A
    /// connection still answering its `connect` may wait again (a claim lost, a probe that
    /// forks), and one told to close keeps its entry too (`TimeoutQueue`).
    /// Asked of every entry of the connect timeout's queue when it is compacted (each a few
    /// times over a storm): the phase is read in place, not out of a copy of the record.
    func isPastConnect(_ id: ConnectionID) -> Bool {
        byID.read(id) { connection in
            if case .scene = connection.phase { return true }
            return false
        } ?? true
    }

    /// Every connection's id, in order.
    var ids: [ConnectionID] { byID.keys.sorted() }

    /// A connection opened (or a service connection for one HTTP API request).
    mutating func open(_ connection: Connection) {
        byID.updateValue(connection)
    }

    /// The socket is gone: forgets the connection. Returns what it was.
    mutating func remove(_ id: ConnectionID) -> Connection? {
        if !held.isEmpty { held[id] = nil }
        return byID.removeValue(forKey: id)
    }

    /// Whether the connection is here and not told to close: what its `connect` waited for (a
    /// probe, a claim, a holder, records, a key) may still answer it. One told to close is
    /// treated as gone: its wait is let go as when the socket goes.
    func isOpen(_ id: ConnectionID) -> Bool {
        byID.read(id) { connection in
            if case .closing = connection.phase { return false }
            return true
        } ?? false
    }

    /// Moves the connection to `phase`, if it is still here. A connection told to close stays
    /// closing: a wait that resolves after the close cannot make it take requests again. A
    /// scene attached to it all the same is kept (`.closing(scene)`), to end with the socket.
    mutating func setPhase(_ phase: Connection.Phase, of id: ConnectionID) {
        byID.modify(id) { connection in
            switch (connection.phase, phase) {
            case (.closing(nil), .scene(let scene)): connection.phase = .closing(scene)
            case (.closing, _): break
            default: connection.phase = phase
            }
        }
    }

    /// Told to close: it keeps its scene, if any, until the socket is gone.
    /// - Returns: false when there is no such connection.
    mutating func markClosing(_ id: ConnectionID) -> Bool {
        byID.modify(id) { connection in
            if case .scene(let scene) = connection.phase {
                connection.phase = .closing(scene)
            } else {
                connection.phase = .closing(nil)
            }
        } != nil
    }

    /// A frame arrived: unless the connection is closing, it spends one from its rate limit,
    /// `rate` tokens a second up to `burst`.
    mutating func admit(_ id: ConnectionID, now: Millis, rate: Double, burst: Double) -> Admission {
        byID.modify(id) { connection in
            if case .closing = connection.phase { return .closing }
            let (allowed, retryAfter) = connection.bucket.take(now: now, rate: rate, burst: burst)
            return .admitted(allowed: allowed, retryAfterMs: retryAfter, phase: connection.phase)
        } ?? .unknown
    }

    /// Keeps a request that came behind the connection's `connect`, to handle once it is
    /// answered. Nothing for a connection not here.
    mutating func hold(_ request: ClientRequest, on id: ConnectionID) {
        guard byID[id] != nil else { return }
        held[id, default: []].append(request)
    }

    /// How many requests are held behind the connection's `connect`.
    func heldCount(_ id: ConnectionID) -> Int { held.isEmpty ? 0 : held[id]?.count ?? 0 }

    /// The requests held behind the connection's `connect`, handed out once.
    mutating func takeHeld(_ id: ConnectionID) -> [ClientRequest] {
        held.isEmpty ? [] : held.removeValue(forKey: id) ?? []
    }
}
