// Threading model: lws runs one service thread (LWS_MAX_SMP is 1 in Debian's build). The
// thread that calls `run()` becomes it: every lws callback, every timer, every delegate call
// and every mutation of `connections` happens there. Other threads talk to the server only
// through `post(_:)` (a locked inbox plus `lws_cancel_service`), `stop()` and the signal flag;
// those are safe from any thread. That is why the class can be `@unchecked Sendable`.
internal import CLibEV
internal import CLibWebSockets
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket and HTTP server on libwebsockets: the only place the server side touches lws.
public final class WebSocketServer: @unchecked Sendable {
    public let configuration: TransportConfiguration
    public weak var delegate: (any WebSocketServerDelegate)?
    /// The port actually listened on (differs from the configuration's when that was 0).
    public private(set) var port: Int = 0
    /// The origins and `Host` names accepted, known once listening (the port may be chosen then).
    public private(set) var originPolicy = OriginPolicy(allowed: [])

    var context: OpaquePointer?
    /// The libev loop lws runs on (`EventLoop.libev`); ours, so `stop()` can break it.
    private var eventLoop: UnsafeMutableRawPointer?
    var connections: [UInt64: ServerConnection] = [:]
    /// HTTP requests being read or answered, by the id kept in their connection's user data.
    var httpExchanges: [UInt64: HTTPExchange] = [:]
    /// API requests among them (`maxHTTPRequestsInFlight`).
    var httpRequestsInFlight = 0
    /// When each API request handed to the delegate times out.
    var httpDeadlines = HTTPDeadlines()
    /// One timer for the earliest of `httpDeadlines`.
    var httpDeadlineTimer: LoopTimer?
    /// Exchanges with an answer being written, in the order they were answered, and the one
    /// timer that writes them (`pumpHTTPWrites`) and how long it waits while sockets are full.
    var httpWriting: [UInt64] = []
    var httpWriteTimer: LoopTimer?
    var httpWriteBackoff: UInt64 = 0
    var nextConnectionID: UInt64 = 0
    /// The connection whose message the delegate is handling, if any: what it causes for that
    /// same connection is queued, not written at once (see `canWriteNow`).
    var receiving: ServerConnection?
    /// Connections with frames gathered during the current callback (`flushGathered`).
    var gathering: [ServerConnection] = []
    /// Close handshakes under way, and the connections waiting for one (`WebSocketServer+Closing.swift`).
    var closingHandshakes = 0
    /// The most close handshakes under way at once so far, for tests.
    public internal(set) var closingHandshakesPeak = 0
    var closesWaiting: [ServerConnection] = []
    var closesWaitingHead = 0
    /// Frames that went to a socket in one write with others (`flushGathered`), for tests (SPI).
    @_spi(Testing) public internal(set) var framesWrittenTogether = 0
    /// New WebSocket upgrades are refused (503) once draining starts.
    public var acceptingConnections = true
    let idle: IdleDetector
    private let inbox = Inbox()
    private let stopRequested = Atomic<Bool>(false)
    /// The idle detector's one timer, set for its earliest deadline.
    private var idleTimer: LoopTimer?
    /// The delegate's one wake-up timer (`wake(atMonotonicMilliseconds:)`).
    private var wakeTimer: LoopTimer?
    /// C strings and structs lws keeps pointers to for the context's whole life.
    private var retained: [UnsafeMutableRawPointer] = []

    public init(configuration: TransportConfiguration) {
        self.configuration = configuration
        idle = IdleDetector(pingAfterMilliseconds: configuration.idlePingMilliseconds)
    }

    deinit {
        idleTimer?.invalidate()
        wakeTimer?.invalidate()
        httpDeadlineTimer?.invalidate()
        httpWriteTimer?.invalidate()
        if let context { lws_context_destroy(context) }
        if let eventLoop { pev_loop_destroy(eventLoop) }
        for pointer in retained { free(pointer) }
    }

    /// Creates the lws context and starts listening. Call before `run()`, on the thread that
    /// will run the service loop.
    public func start() throws {
        lws_set_log_level(LLL_ERR | LLL_WARN, nil)
        signal(SIGPIPE, SIG_IGN)

        let protocols = allocate(lws_protocols.self, count: 3)
        protocols[0] = lws_protocols()
        protocols[0].name = UnsafePointer(keep(strdup("http")))
        protocols[0].callback = httpCallback
        protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
        protocols[1] = lws_protocols()
        protocols[1].name = UnsafePointer(keep(strdup(configuration.subprotocol)))
        protocols[1].callback = webSocketCallback
        protocols[1].per_session_data_size = MemoryLayout<UInt64>.size
        // lws allocates this much per connection. Messages larger than it arrive in pieces,
        // which the RECEIVE handler joins, so a small buffer costs nothing but memory saved.
        protocols[1].rx_buffer_size = 4 * 1024
        // Without this lws would also cut every send to rx_buffer_size bytes.
        protocols[1].tx_packet_size = 128 * 1024
        protocols[2] = lws_protocols()

        var info = lws_context_creation_info()
        info.port = Int32(configuration.port)
        info.iface = UnsafePointer(keep(strdup(configuration.host)))
        info.protocols = UnsafePointer(protocols)
        info.mounts = UnsafePointer(makeMounts())
        info.user = Unmanaged.passUnretained(self).toOpaque()
        // No LWS_SERVER_OPTION_VALIDATE_UTF8: `UTF8Validator` checks text (lws's check would also
        // drop a connection whose close reason is not UTF-8 without the 1007 close it owes).
        info.options = pws_option_disable_ipv6()
        info.vhost_name = UnsafePointer(keep(strdup("default")))
        info.timeout_secs = 20
        // The request line and headers lws keeps per request (the short field left 0 so the
        // wider one counts).
        info.max_http_header_data = 0
        info.max_http_header_data2 = UInt32(max(configuration.maxHTTPHeaderBytes, 1_024))

        // lws's own idle pings ("validity") keep every connection's timer in one sorted list and
        // re-insert it, walking the whole list, on each connect and each received frame: O(n)
        // per message at tens of thousands of scenes. A zero policy turns them off;
        // `IdleDetector` pings silent connections instead.
        let retry = allocate(lws_retry_bo_t.self, count: 1)
        retry.pointee = lws_retry_bo_t()
        info.retry_and_idle_policy = UnsafePointer(retry)

        if configuration.deflate {
            let extensions = allocate(lws_extension.self, count: 2)
            extensions[0] = lws_extension()
            extensions[0].name = UnsafePointer(keep(strdup("permessage-deflate")))
            extensions[0].callback = lws_extension_callback_pm_deflate
            extensions[0].client_offer = UnsafePointer(keep(strdup("permessage-deflate; client_max_window_bits")))
            extensions[1] = lws_extension()
            info.extensions = UnsafePointer(extensions)
        }

        // A foreign libev loop: lws runs on it through its libev plugin, and the server keeps
        // the handle so `stop()` can break it (lws offers no way to end its own loop early).
        let foreignLoops = allocate(UnsafeMutableRawPointer?.self, count: 1)
        if configuration.eventLoop == .libev {
            guard let loop = pev_loop_new() else { throw TransportError.eventLoopFailed("libev could not create a loop") }
            eventLoop = loop
            foreignLoops[0] = loop
            info.options |= pws_option_libev()
            info.foreign_loops = foreignLoops
        }

        guard let context = lws_create_context(&info) else {
            if configuration.eventLoop == .libev {
                throw TransportError.eventLoopFailed(
                    "lws could not start on libev (is Debian's libwebsockets-evlib-ev installed?) or could not listen on \(configuration.host):\(configuration.port)")
            }
            throw TransportError.listenFailed(host: configuration.host, port: configuration.port)
        }
        self.context = context
        guard let vhost = lws_get_vhost_by_name(context, "default") else {
            throw TransportError.listenFailed(host: configuration.host, port: configuration.port)
        }
        port = Int(lws_get_vhost_listen_port(vhost))
        originPolicy = configuration.origins.policy(bindHost: configuration.host, port: port)
        if let eventLoop {
            configuration.logger.debug("event loop", metadata: ["loop": "libev", "backend": "\(String(cString: pev_backend_name(eventLoop)))"])
        }
        idleTimer = LoopTimer(context: context, eventLoop: eventLoop) { [unowned self] in
            expireIdle()
            flushGathered()
        }
        wakeTimer = LoopTimer(context: context, eventLoop: eventLoop) { [unowned self] in
            delegate?.serverDidWake()
            flushGathered()
        }
        httpDeadlineTimer = LoopTimer(context: context, eventLoop: eventLoop) { [unowned self] in
            expireHTTPRequests()
            flushGathered()
        }
        httpWriteTimer = LoopTimer(context: context, eventLoop: eventLoop) { [unowned self] in
            pumpHTTPWrites()
        }
    }

    /// Runs the service loop on the calling thread until `stop()`.
    public func run() {
        guard let context else { return }
        if let eventLoop {
            if !stopRequested.load(ordering: .acquiring) { pev_run(eventLoop) }
            return
        }
        while !stopRequested.load(ordering: .acquiring) {
            if lws_service(context, 0) < 0 { break }
        }
    }

    /// Ends `run()`. Safe from any thread.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        if let context { lws_cancel_service(context) }
    }

    /// Runs `work` on the service thread soon. Safe from any thread.
    public func post(_ work: @escaping @Sendable () -> Void) {
        inbox.append(work)
        if let context { lws_cancel_service(context) }
    }

    /// Milliseconds on the clock `wake(atMonotonicMilliseconds:)` uses: from an arbitrary
    /// start, never jumping with the wall clock.
    public static func monotonicMilliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
    }

    // MARK: Service-thread API

    /// Calls `serverDidWake()` once, at `deadline` (or at once if it has passed), replacing any
    /// wake-up asked for before. The server does nothing between deadlines: there is no tick.
    public func wake(atMonotonicMilliseconds deadline: UInt64) {
        let now = Self.monotonicMilliseconds()
        wakeTimer?.schedule(afterMilliseconds: deadline > now ? deadline - now : 0)
    }

    /// `wake(atMonotonicMilliseconds:)` that many milliseconds from now.
    public func wake(afterMilliseconds delay: Int) {
        wake(atMonotonicMilliseconds: Self.monotonicMilliseconds() + UInt64(max(delay, 0)))
    }

    /// Writes a frame, or queues it behind what is waiting. A connection whose queue is over
    /// `maxOutboundQueue` is closed as a slow consumer instead: one stuck client must not grow
    /// the server's memory without bound.
    public func send(_ frame: OutboundFrame, to id: UInt64) {
        guard let connection = connections[id], !connection.closing else { return }
        if connection.queue.count >= configuration.maxOutboundQueue {
            configuration.logger.notice("closing a connection that reads too slowly", metadata: [
                "connection": "\(id)", "queued": "\(connection.queue.count)", "code": "\(configuration.slowConsumerCloseCode)",
            ])
            closeSoon(connection, code: configuration.slowConsumerCloseCode, reason: "outbound queue overflow")
            return
        }
        if connection.queue.isEmpty, connection.gathered.isEmpty
            ? !connection.pingWanted && canWriteNow(connection)
            : connection.gatheredBytes + frame.payloadCount <= configuration.maxCoalescedWriteBytes {
            // Nothing is ahead of this frame but what this callback already sent: it goes to the
            // socket at the callback's end, with them (`flushGathered`), instead of asking lws
            // for a WRITEABLE callback, which costs two epoll_ctl (write interest on, then off),
            // a loop turn and lws's service path per frame.
            gather(frame, for: connection)
            return
        }
        connection.queue.push(frame)
        lws_callback_on_writable(connection.wsi)
    }

    /// Whether a frame may be written outside a WRITEABLE callback: only when lws holds none
    /// of an earlier write (`lws_partial_buffered`), the peer has not begun closing, no
    /// extension is in use (permessage-deflate may need more than one callback per frame), and
    /// the frame is not caused by a message of the same connection: lws answers a ping on the
    /// connection's next WRITEABLE turn, so a reply written at once could overtake the pong of
    /// a ping the client sent before its request.
    private func canWriteNow(_ connection: ServerConnection) -> Bool {
        !configuration.deflate && !connection.peerClosed && receiving !== connection
            && lws_partial_buffered(connection.wsi) == 0
    }

    /// Closes after everything queued so far is written.
    public func close(_ id: UInt64, code: UInt16, reason: String) {
        guard let connection = connections[id], !connection.closing else { return }
        connection.closeAfterFlush = (code, reason)
        closeRequested(connection)
        lws_callback_on_writable(connection.wsi)
    }

    /// Sends a WebSocket ping; the pong arrives as `serverDidReceivePong`.
    public func ping(_ id: UInt64) {
        guard let connection = connections[id], !connection.closing else { return }
        connection.pingWanted = true
        lws_callback_on_writable(connection.wsi)
    }

    /// Stops reading from a connection (lws rx flow control): nothing more of it is received,
    /// and once the kernel's buffers fill, its sender is held back by TCP. For a connection
    /// whose pending work is over a bound. Writing to it goes on. While paused, its silence
    /// is not held against it (its pongs are among what is not being read).
    public func pauseReading(_ id: UInt64) {
        guard let connection = connections[id], !connection.readingPaused else { return }
        connection.readingPaused = true
        if !connection.closing { idle.forget(connection) }
        _ = pws_rx_flow(connection.wsi, 0)
    }

    /// Reads from a paused connection again, starting with what arrived meanwhile.
    public func resumeReading(_ id: UInt64) {
        guard let connection = connections[id], connection.readingPaused else { return }
        connection.readingPaused = false
        if !connection.closing {
            idle.heard(connection, at: Self.monotonicMilliseconds())
            armIdleTimer()
        }
        _ = pws_rx_flow(connection.wsi, 1)
    }

    /// Messages queued for a connection, for metrics and tests.

    /// The client a connection counts as: its peer address, or behind a trusted proxy the
    /// address the proxy forwarded (`PeerAddress.client`); nil for an unknown connection.
    public func peer(of id: UInt64) -> String? { connections[id]?.peer }

    public var connectionCount: Int { connections.count }

    // MARK: Internals

    func drainInbox() {
        for work in inbox.drain() { work() }
        if SignalRelay.takePending() { delegate?.serverDidReceiveTerminationSignal() }
        if SignalRelay.takeReloadPending() { delegate?.serverDidReceiveReloadSignal() }
        if let eventLoop, stopRequested.load(ordering: .acquiring) { pev_break(eventLoop) }
    }

    /// Closing at the next chance, dropping what is queued (protocol violation, overflow).
    /// Closing from inside RECEIVE breaks permessage-deflate's state, so the close frame goes
    /// out from the next WRITEABLE callback instead.
    func closeSoon(_ connection: ServerConnection, code: UInt16, reason: String) {
        guard connection.closeNow == nil else { return }
        connection.queue.removeAll()
        connection.gathered.removeAll()
        connection.inbound = []
        connection.closeNow = (code, reason)
        closeRequested(connection)
        lws_callback_on_writable(connection.wsi)
    }

    /// A close was asked for: if it never completes (the peer reads nothing, so not even the
    /// close frame leaves), the idle detector drops the connection `idlePingMilliseconds` later.
    private func closeRequested(_ connection: ServerConnection) {
        idle.closeRequested(connection, at: Self.monotonicMilliseconds())
        armIdleTimer()
    }

    /// Sets the idle timer for the detector's earliest deadline unless it is already set:
    /// deadlines only ever move later (hearing from a connection moves it to the back), so a
    /// set timer is never too late, at worst early, and then `expireIdle` sets it again.
    func armIdleTimer() {
        guard let idleTimer, !idleTimer.isScheduled, let deadline = idle.nextDeadline else { return }
        let now = Self.monotonicMilliseconds()
        idleTimer.schedule(afterMilliseconds: deadline > now ? deadline - now : 0)
    }

    private func makeMounts() -> UnsafeMutablePointer<lws_http_mount>? {
        var mounts: [(path: String, origin: String, kind: UInt8)] = [
            ("/healthz", "http", UInt8(LWSMPRO_CALLBACK.rawValue)),
            ("/metrics", "http", UInt8(LWSMPRO_CALLBACK.rawValue)),
        ]
        if let apiPath = configuration.apiPath {
            mounts.append((apiPath, "http", UInt8(LWSMPRO_CALLBACK.rawValue)))
        }
        if let webRoot = configuration.webRoot {
            mounts.append(("/", webRoot, UInt8(LWSMPRO_FILE.rawValue)))
        }
        let list = allocate(lws_http_mount.self, count: mounts.count)
        for (index, mount) in mounts.enumerated() {
            list[index] = lws_http_mount()
            list[index].mountpoint = UnsafePointer(keep(strdup(mount.path)))
            list[index].mountpoint_len = UInt8(mount.path.utf8.count)
            list[index].origin = UnsafePointer(keep(strdup(mount.origin)))
            list[index].origin_protocol = mount.kind
            if mount.kind == UInt8(LWSMPRO_FILE.rawValue) {
                list[index].def = UnsafePointer(keep(strdup("index.html")))
                list[index].extra_mimetypes = UnsafePointer(mimeTypes())
            }
            if index + 1 < mounts.count { list[index].mount_next = UnsafePointer(list + index + 1) }
        }
        return list
    }

    /// lws's built-in table lacks the types ES modules and manifests are served with.
    private func mimeTypes() -> UnsafeMutablePointer<lws_protocol_vhost_options> {
        let types = [(".mjs", "text/javascript"), (".js", "text/javascript"), (".json", "application/json"),
                     (".webmanifest", "application/manifest+json"), (".svg", "image/svg+xml")]
        let list = allocate(lws_protocol_vhost_options.self, count: types.count)
        for (index, type) in types.enumerated() {
            list[index] = lws_protocol_vhost_options()
            list[index].name = UnsafePointer(keep(strdup(type.0)))
            list[index].value = UnsafePointer(keep(strdup(type.1)))
            if index + 1 < types.count { list[index].next = UnsafePointer(list + index + 1) }
        }
        return list
    }

    /// Zeroed memory that lives as long as the context (lws keeps the pointers).
    private func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let raw = calloc(count, MemoryLayout<T>.stride)!
        retained.append(raw)
        return raw.assumingMemoryBound(to: T.self)
    }

    private func keep(_ pointer: UnsafeMutablePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
        if let pointer { retained.append(UnsafeMutableRawPointer(pointer)) }
        return pointer
    }

    static func from(_ wsi: OpaquePointer?) -> WebSocketServer? {
        guard let wsi, let context = lws_get_context(wsi), let user = lws_context_user(context) else { return nil }
        return Unmanaged<WebSocketServer>.fromOpaque(user).takeUnretainedValue()
    }

    /// Installs SIGTERM, SIGINT and SIGHUP handlers that wake this server's service loop.
    public func installSignalHandlers() {
        SignalRelay.install(context: context)
    }
}

public enum TransportError: Error, CustomStringConvertible {
    case listenFailed(host: String, port: Int)
    case eventLoopFailed(String)

    public var description: String {
        switch self {
        case .listenFailed(let host, let port): "could not listen on \(host):\(port)"
        case .eventLoopFailed(let reason): reason
        }
    }
}
