/// What the hub asks the outside world to do. The runtime takes effects in the order given, but
/// they do not all complete in that order: store work (`persist`, `commit`, `load`, `signal`)
/// reaches the store thread in order, while what goes to clients waits as the contract below says,
/// so a `commit` can reach the store before a `send` given earlier reaches its connection.
///
/// Ordering contract: a `send`, `broadcast` or `close` that follows a `persist` is not
/// performed until that persist is durable. So nothing leaves the server that depends on
/// state a crash could still lose, and an acknowledgement always means "saved". A `commit`
/// holds nothing back: the hub does not apply it, nor say anything about it, until its
/// outcome comes back as `HubEvent.committed`. `sendNow` and `probe` reveal no stored state
/// and are never held, so a slow disk cannot make a live client look dead.
public enum Effect: Sendable, Equatable {
    case send(ServerMessage, to: ConnectionID)
    /// The same message to many connections: encoded once.
    case broadcast(ServerMessage, to: [ConnectionID])
    /// Sent at once, ahead of anything held for durability: liveness answers only.
    case sendNow(ServerMessage, to: ConnectionID)
    case persist([StoreCommand])
    /// Persisted in order with everything else, but holds nothing back: bookkeeping that no
    /// reply or event reports.
    case persistQuietly([StoreCommand])
    /// A compare-and-set write to a channel; its outcome comes back as `HubEvent.committed`.
    case commit(Commit)
    /// Close after the connection's queued messages are written.
    case close(ConnectionID, CloseCode, reason: String)
    /// Send a WebSocket ping; a pong comes back as `HubEvent.pong`.
    case probe(ConnectionID)
    /// Read something from the store off the service thread; the result comes back as
    /// `HubEvent.loaded`.
    case load(LoadRequest)
    /// A message to other nodes of the cluster, in order with the store's writes.
    case signal(NodeSignal)
    /// Ask the shared store now which nodes are gone (a lease run out, or the node's lock
    /// released with its connection: killed); answered with `ChangeNotice.nodesChecked`.
    case checkNodes
}

/// What happens to the hub: transport events, store results, and the passing of time.
public enum HubEvent: Sendable {
    /// A connection opened, from `peer` (its address, or the client's behind a trusted proxy;
    /// nil when unknown, which no limit per address applies to).
    case opened(ConnectionID, peer: String? = nil)
    case received(ConnectionID, JSONValue)
    /// A frame that was not valid JSON; `reason` is the parser's message.
    case unreadable(ConnectionID, reason: String)
    /// A frame that is valid JSON but nested deeper than `maxJSONDepth`, or with a number
    /// outside the exact range: refused with its own error code.
    case refused(ConnectionID, PanesError)
    /// The connection closed. `abnormal` when no close frame came (a crash or a network drop)
    /// or the close code was not a normal one.
    case closed(ConnectionID, abnormal: Bool)
    case pong(ConnectionID)
    case loaded(LoadResult)
    case committed(CommitID, CommitOutcome)
    /// Time passed: the runtime sends this at `Hub.nextDeadline` (and may send it at any other
    /// time: work that is not due yet is left alone).
    case tick
    /// SIGTERM: stop accepting scenes, tell every scene to reconnect later.
    case drain
    /// Another node wrote to the shared store (a hint; the hub reads the change itself).
    case notice(ChangeNotice)
    /// An HTTP API request whose key checked out, to answer on `connection`: an id with
    /// `Hub.serviceConnectionBit` set, which no transport connection has (`Hub+API.swift`).
    case api(ConnectionID, APICall)
}
