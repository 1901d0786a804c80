// Threading model: lws runs one service thread (LWS_MAX_SMP is 1 in Debian's build). The
// thread that calls `run()` becomes it: every lws callback, every delegate call and every
// mutation of `connections` happens there. Other threads talk to the server only through
// `post(_:)` (a locked inbox plus `lws_cancel_service`) and the signal flag; both are safe
// from any thread. That is why the class can be `@unchecked Sendable`.
internal import CLibWebSockets
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

    var context: OpaquePointer?
    var connections: [UInt64: ServerConnection] = [:]
    var httpResponses: [UInt64: HTTPResponse] = [:]
    var nextConnectionID: UInt64 = 0
    var lastIdleSweep: UInt64 = 0
    /// New WebSocket upgrades are refused once draining starts.
    public var acceptingConnections = true
    private let inbox = Inbox()
    private let stopRequested = Atomic<Bool>(false)
    private var timer: UnsafeMutablePointer<pws_timer>?
    /// C strings and structs lws keeps pointers to for the context's whole life.
    private var retained: [UnsafeMutableRawPointer] = []

    public init(configuration: TransportConfiguration) {
        self.configuration = configuration
    }

    deinit {
        if let context { lws_context_destroy(context) }
        timer?.deallocate()
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
        info.options = pws_option_validate_utf8() | pws_option_disable_ipv6()
        info.vhost_name = UnsafePointer(keep(strdup("default")))
        info.timeout_secs = 20

        // lws's own idle pings ("validity") keep every connection's timer in one sorted list and
        // re-insert it, walking the whole list, on each connect and each received frame: O(n)
        // per message at tens of thousands of scenes. A zero policy turns them off; `sweepIdle`
        // pings silent connections instead, a few times a minute.
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

        guard let context = lws_create_context(&info) else {
            throw TransportError.listenFailed(host: configuration.host, port: configuration.port)
        }
        self.context = context
        guard let vhost = lws_get_vhost_by_name(context, "default") else {
            throw TransportError.listenFailed(host: configuration.host, port: configuration.port)
        }
        port = Int(lws_get_vhost_listen_port(vhost))

        let timer = UnsafeMutablePointer<pws_timer>.allocate(capacity: 1)
        timer.initialize(to: pws_timer())
        timer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        self.timer = timer
        scheduleTick()
    }

    /// Runs the service loop on the calling thread until `stop()`.
    public func run() {
        guard let context else { return }
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

    // MARK: Service-thread API

    /// Queues a frame. A connection whose queue is over `maxOutboundQueue` is closed as a slow
    /// consumer instead: one stuck client must not grow the server's memory without bound.
    public func send(_ frame: OutboundFrame, to id: UInt64) {
        guard let connection = connections[id], !connection.closing else { return }
        if connection.queue.count >= configuration.maxOutboundQueue {
            connection.queue.removeAll()
            connection.closeNow = (configuration.slowConsumerCloseCode, "outbound queue overflow")
        } else {
            connection.queue.push(frame)
        }
        lws_callback_on_writable(connection.wsi)
    }

    /// Closes after everything queued so far is written.
    public func close(_ id: UInt64, code: UInt16, reason: String) {
        guard let connection = connections[id], !connection.closing else { return }
        connection.closeAfterFlush = (code, reason)
        lws_callback_on_writable(connection.wsi)
    }

    /// Sends a WebSocket ping; the pong arrives as `serverDidReceivePong`.
    public func ping(_ id: UInt64) {
        guard let connection = connections[id], !connection.closing else { return }
        connection.pingWanted = true
        lws_callback_on_writable(connection.wsi)
    }

    /// Messages queued for a connection, for metrics and tests.
    public func queuedCount(_ id: UInt64) -> Int { connections[id]?.queue.count ?? 0 }

    public var connectionCount: Int { connections.count }

    // MARK: Internals

    func drainInbox() {
        for work in inbox.drain() { work() }
        if SignalRelay.takePending() { delegate?.serverDidReceiveTerminationSignal() }
    }

    func scheduleTick() {
        guard let context, let timer else { return }
        pws_timer_schedule(context, timer, { sul in
            guard let sul else { return }
            let server = Unmanaged<WebSocketServer>.fromOpaque(pws_timer_owner(sul)).takeUnretainedValue()
            server.delegate?.serverTick()
            server.sweepIdle()
            server.scheduleTick()
        }, Int64(configuration.tickMilliseconds) * 1000)
    }

    private func makeMounts() -> UnsafeMutablePointer<lws_http_mount>? {
        var mounts: [(path: String, origin: String, kind: UInt8)] = [
            ("/healthz", "http", UInt8(LWSMPRO_CALLBACK.rawValue)),
            ("/metrics", "http", UInt8(LWSMPRO_CALLBACK.rawValue)),
        ]
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

    /// Installs SIGTERM and SIGINT handlers that wake this server's service loop.
    public func installSignalHandlers() {
        SignalRelay.install(context: context)
    }
}

public enum TransportError: Error, CustomStringConvertible {
    case listenFailed(host: String, port: Int)
    case connectFailed(String)

    public var description: String {
        switch self {
        case .listenFailed(let host, let port): "could not listen on \(host):\(port)"
        case .connectFailed(let reason): "could not connect: \(reason)"
        }
    }
}
