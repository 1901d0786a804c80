/// What the hub asks the outside world to do. The runtime performs effects in order.
///
/// Ordering contract: a `send`, `broadcast` or `close` that follows a `persist` is not
/// performed until that persist is durable. So nothing leaves the server that depends on
/// state a crash could still lose, and an acknowledgement always means "saved".
public enum Effect: Sendable, Equatable {
    case send(ServerMessage, to: ConnectionID)
    /// The same message to many connections: encoded once.
    case broadcast(ServerMessage, to: [ConnectionID])
    case persist([StoreCommand])
    /// Close after the connection's queued messages are written.
    case close(ConnectionID, CloseCode, reason: String)
    /// Send a WebSocket ping; a pong comes back as `HubEvent.pong`.
    case probe(ConnectionID)
    /// Read something from the store off the service thread; the result comes back as
    /// `HubEvent.loaded`.
    case load(LoadRequest)
}

/// What happens to the hub: transport events, store results, and the passing of time.
public enum HubEvent: Sendable {
    case opened(ConnectionID)
    case received(ConnectionID, JSONValue)
    /// A frame that was not valid JSON; `reason` is the parser's message.
    case unreadable(ConnectionID, reason: String)
    /// The connection closed. `abnormal` when no close frame came (a crash or a network drop)
    /// or the close code was not a normal one.
    case closed(ConnectionID, abnormal: Bool)
    case pong(ConnectionID)
    case loaded(LoadResult)
    /// Called a few times a second: expiries, probes, idle-session clean-up.
    case tick
    /// SIGTERM: stop accepting scenes, tell every scene to reconnect later.
    case drain
}
