/// What the transport reports. Every method is called on the service thread, the one that
/// called `WebSocketServer.run()`, and must not block: it is the thread that owns live state.
public protocol WebSocketServerDelegate: AnyObject {
    /// A WebSocket connection is established. `peer` is the client it counts as
    /// (`PeerAddress.client`, read from the handshake). The transport keeps no copy of it.
    func serverDidOpen(_ connection: UInt64, peer: String?)
    /// A complete text message, valid UTF-8. The buffer is valid only during the call.
    func serverDidReceive(_ message: UnsafeRawBufferPointer, from connection: UInt64)
    /// `abnormal` when the peer went away without a close frame (crash, network drop) and the
    /// server had not asked it to close.
    func serverDidClose(_ connection: UInt64, abnormal: Bool)
    func serverDidReceivePong(from connection: UInt64)
    /// The deadline given to `WebSocketServer.wake(atMonotonicMilliseconds:)` has come. Called
    /// once per call to `wake`; set the next deadline from here.
    func serverDidWake()
    /// The loop is about to wait for events, and `WebSocketServer.notifyBeforeWaiting()` was
    /// called since it last did: once, whatever number of events came in between.
    func serverWillWait()
    /// SIGTERM or SIGINT arrived (after `installSignalHandlers()`).
    func serverDidReceiveTerminationSignal()
    /// SIGHUP arrived (after `installSignalHandlers()`): read what may change without a restart.
    func serverDidReceiveReloadSignal()
    /// A dynamic HTTP response for a GET of `path` outside the API, or nil for 404. Files under
    /// `webRoot` are served without asking. Called only for requests that passed the `Host`
    /// and `Origin` checks.
    func serverHTTPResponse(for path: String) -> HTTPResponse?
    /// A request under `TransportConfiguration.apiPath`, read whole, that passed the `Host`
    /// and `Origin` checks and the transport's limits. Answer it with
    /// `WebSocketServer.respond(to: request.id, with:)` on the service thread, during this
    /// call or later (a write answers once it is durable). Unanswered after
    /// `httpResponseTimeoutMilliseconds`, the transport answers 504 itself.
    func serverDidReceiveHTTPRequest(_ request: HTTPRequest)
    /// The response for an API request the transport refuses or gives up on (`refusal.status`
    /// is the status written, whatever the response says; `Allow` and `Retry-After` are added
    /// where the status needs them). Its body should name what was wrong.
    func serverHTTPRefusalResponse(_ refusal: HTTPRefusal) -> HTTPResponse
    /// A request handed over by `serverDidReceiveHTTPRequest` will not be answered by the
    /// delegate any more: it timed out, or its connection closed. `respond` for it returns
    /// false from now on; whatever the request started (a write) goes on.
    func serverHTTPRequestAbandoned(_ id: UInt64)
    /// Nil to let a WebSocket upgrade from `peer` (the client it counts as, `PeerAddress.client`)
    /// go on; otherwise the milliseconds after which it may try again: it is answered 429 with
    /// `Retry-After` before the handshake completes (too many failed authentications).
    func serverRetryAfter(forPeer peer: String) -> Int?
    /// Whether a connection from `peer` (its socket's address; never asked for a
    /// `--trusted-proxy`) is closed as soon as it is accepted, before its request is read.
    func serverClosesAtAccept(peer: String) -> Bool
}

extension WebSocketServerDelegate {
    public func serverRetryAfter(forPeer peer: String) -> Int? { nil }
    public func serverClosesAtAccept(peer: String) -> Bool { false }
    public func serverDidReceiveReloadSignal() {}
    public func serverWillWait() {}
}
