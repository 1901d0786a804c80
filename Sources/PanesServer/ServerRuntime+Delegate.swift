// Threading: the transport calls these on the service thread (the lws loop), the only thread
// that touches the hub.
import Logging
import PanesCore
import PanesJSON
public import PanesTransport

extension ServerRuntime: WebSocketServerDelegate {
    public func serverDidOpen(_ connection: UInt64, peer: String?) {
        guard rejoining == nil else {
            // Upgraded just before the node stopped taking connections.
            retired.insert(connection)
            transport.close(connection, code: CloseCode.nodeLost.rawValue, reason: "this node is rejoining; reconnect")
            return
        }
        let start = RuntimeMetrics.now
        metrics.opened(connection, at: start)
        perform(hub.handle(.opened(ConnectionID(connection), peer: peer)))
        metrics.turn(since: start)
    }

    public func serverDidReceive(_ message: UnsafeRawBufferPointer, from connection: UInt64) {
        guard rejoining == nil, !retired.contains(connection) else { return }
        let start = RuntimeMetrics.now
        defer { metrics.turn(since: start) }
        let event: HubEvent
        let id = ConnectionID(connection)
        // A plain `connect` (every window of a reconnect storm sends one) is read into its
        // request without a tree; any other frame is decoded, and the hub reads its request.
        if let request = ConnectFrameReader.read(message, settings: settings) {
            event = .request(id, request)
        } else {
            event = Self.decoded(message, on: id, maxDepth: settings.maxJSONDepth)
        }
        // One access to `hub` for both (each is checked for overlap at run time); the event
        // handed over, not captured (a captured one is copied into `handle`).
        func handle(_ hub: inout Hub, _ event: consuming HubEvent) -> ([Effect], (id: RequestID, typeIndex: Int?)?) {
            (hub.handle(event), hub.takeReceivedRequest())
        }
        let (effects, request) = handle(&hub, event)
        // Before the effects go out: the reply among them is timed from `start`.
        if let request { metrics.received(request.id, typeIndex: request.typeIndex, on: connection, at: start) }
        perform(effects)
    }

    /// The frame's JSON, or why it is refused, as the hub's event.
    private static func decoded(_ message: UnsafeRawBufferPointer, on id: ConnectionID, maxDepth: Int) -> HubEvent {
        switch JSONCodec.decode(message, maxDepth: maxDepth) {
        case .success(let json):
            .received(id, json)
        case .failure(let error) where error.kind == .tooDeep:
            .refused(id, PanesError(.nestingTooDeep, "the frame's \(error.description) (setting `maxJSONDepth`)"))
        case .failure(let error) where error.kind == .numberOutOfRange:
            .refused(id, PanesError(.numberOutOfRange, "a number in the frame is out of range: \(error.description); integers must fit in 64 bits"))
        case .failure(let error):
            .unreadable(id, reason: error.description)
        }
    }

    public func serverDidClose(_ connection: UInt64, abnormal: Bool) {
        metrics.closed(connection)
        if retired.remove(connection) != nil || rejoining != nil { return }
        pausedConnections.remove(connection)
        perform(hub.handle(.closed(ConnectionID(connection), abnormal: abnormal)))
        checkDrain()
    }

    public func serverDidReceivePong(from connection: UInt64) {
        guard rejoining == nil, !retired.contains(connection) else { return }
        perform(hub.handle(.pong(ConnectionID(connection))))
    }

    public func serverDidWake() {
        armedDeadline = nil
        if rejoining != nil {
            checkDrain()
            return
        }
        perform(hub.handle(.tick))
        checkDrain()
        armWake()
    }

    /// Events were performed during this loop turn: the wake-up follows the hub's next
    /// deadline from here, once for all of them.
    public func serverWillWait() {
        // The turn's quiet persists (a storm's resumes), under one lock (`StoreWorker.handOver`).
        worker.handOver()
        if wakeOwed { armWake() }
    }

    public func serverDidReceiveTerminationSignal() {
        guard drainDeadline == nil else { return }
        logger.notice("termination signal: draining")
        drainDeadline = Self.monotonicClock() + Millis(settings.drainTimeoutMs)
        refusal = .draining
        // Rejoining, the node holds no scene and nothing to flush.
        if rejoining != nil {
            transport.stop()
            return
        }
        perform(hub.handle(.drain))
        checkDrain()
    }

    public func serverRetryAfter(forPeer peer: String) -> Int? {
        hub.retryAfter(forPeer: peer)
    }

    public func serverClosesAtAccept(peer: String) -> Bool {
        hub.closesAtAccept(peer: peer)
    }

    public func serverHTTPResponse(for path: String) -> HTTPResponse? {
        switch path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path {
        case "/healthz":
            if drainDeadline != nil || storeFailed { return HTTPResponse(status: 503, body: "draining\n") }
            // A node without its lease must not be sent new clients: they could not claim anything.
            if rejoining != nil { return HTTPResponse(status: 503, body: "rejoining\n") }
            if let cluster, !cluster.isHealthy { return HTTPResponse(status: 503, body: "lease lost\n") }
            return HTTPResponse(body: "ok\n")
        case "/metrics":
            return HTTPResponse(contentType: "text/plain; version=0.0.4; charset=utf-8", body: metricsText())
        default:
            return nil
        }
    }
}
