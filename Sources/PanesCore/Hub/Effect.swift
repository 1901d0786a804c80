/// What the hub asks the outside world to do.
///
/// The durability contract: what leaves the server never reports state that a crash could
/// still lose. The runtime keeps it with one rule (`DurabilityGate` in PanesServer):
///
/// - `send`, `broadcast` and `close` wait until every `persist` given before them (in this
///   list or an earlier one) is durable, and leave in the order given.
/// - `sendUnapplied` (an answer that says nothing was applied because the store failed:
///   `storage_failed`) waits only for output already held for its own connection, never for
///   other persists: a client is not kept waiting for its error behind other clients' writes
///   stalled by a database outage, and still reads its replies and events in order.
/// - `sendNow` and `probe` reveal no stored state and wait for nothing, so a slow disk cannot
///   make a live client look dead.
/// - A `commit` holds nothing back: the hub applies it, and says anything about it, only
///   when its outcome comes back (`HubEvent.committed`), which the store thread reports once
///   the transaction is durable (or failed); what the hub says then passes the same rule.
/// - `persistQuietly`, `signal` and `load` hold nothing back.
///
/// The order the runtime performs a list in (`ServerRuntime.perform`): store work (`persist`,
/// `persistQuietly`, `commit`, `signal`, `load`) reaches the store thread in the order given,
/// and so does output among itself; but store work is handed over before the output listed
/// ahead of it, except that the output before a `persist` is handed over first (it must not
/// wait for that persist). A busy document's turn writes hundreds of frames, and its next
/// commit would otherwise wait behind their system calls. `checkNodes` goes to the heartbeat's
/// thread at once, like store work.
public enum Effect: Sendable, Equatable {
    case send(ServerMessage, to: ConnectionID)
    /// The same message to many connections: encoded once.
    case broadcast(ServerMessage, to: [ConnectionID])
    /// Sent at once, ahead of anything held for durability: liveness answers only.
    case sendNow(ServerMessage, to: ConnectionID)
    /// An answer that says nothing was applied because the store failed (`storage_failed`):
    /// waits only for output held for its own connection (see the contract above).
    case sendUnapplied(ServerMessage, to: ConnectionID)
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
    /// A frame already read as a request, without a `JSONValue` tree (the runtime reads a
    /// plain `connect` so, `ConnectFrameReader`): handled as `received` handles the tree it
    /// decodes to.
    case request(ConnectionID, ClientRequest)
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
    /// A shared store's claims (`CoordinationCommand.claimSession` naming this node) found drops
    /// held for these sessions (`AppliedWrites.heldDropsFound`): handed in before the
    /// outcomes of the transaction that made the claims.
    case heldDropsFound([SessionID])
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
