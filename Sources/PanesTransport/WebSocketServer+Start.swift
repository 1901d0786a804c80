// Threading: `start()` runs once, before `run()`, on the thread that will run the service
// loop (see WebSocketServer.swift).
internal import CLibEV
internal import CLibWebSockets
internal import CLibWebSocketsAlloc
internal import CLibWebSocketsLog
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension WebSocketServer {
    /// Creates the lws context and starts listening. Call before `run()`, on the thread that
    /// will run the service loop.
    public func start() throws {
        // Through CLibWebSocketsLog, whose check in front of lws's log call must know the levels.
        pws_set_log_level(LLL_ERR | LLL_WARN, nil)
        if pws_log_interposing() != 0 && pws_log_calls_reach_here() == 0 {
            // Lines are emitted as before; only the cost of lws's log calls at levels that are
            // off (bench/README.md) comes back.
            configuration.logger.warning("lws's log calls do not reach CLibWebSocketsLog's _lws_log (lws binds them itself)")
        }
        // lws's upgrade header tables from a region of their own that gives a settled connect
        // burst's pages back, instead of holes among the blocks open connections keep
        // (CLibWebSocketsAlloc; once a process, before lws allocates anything).
        switch pws_lws_allocator_install() {
        case 1:
            break
        case -1:
            configuration.logger.notice("lws's header tables come from malloc: PANES_LWS_HEADER_POOL=off")
        default:
            configuration.logger.warning("lws's header tables come from malloc: no address space for their region")
        }
        signal(SIGPIPE, SIG_IGN)
        var info = makeContextInfo()
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
        try listen(&info)
    }

    /// lws's receive buffer per WebSocket connection (`rx_buffer_size`), in bytes.
    static let receiveBufferBytes = 2 * 1024

    /// lws's `timeout_secs` (see `makeContextInfo`).
    static let lwsTimeoutSeconds = 20

    /// `httpHeaderTimeoutMs` in lws's whole seconds, rounded up (at least 1).
    static func headerTimeoutSeconds(_ milliseconds: Int) -> Int {
        max(1, (milliseconds + 999) / 1_000)
    }

    /// The context's settings: protocols, mounts, limits, extensions. What it points to is
    /// kept (`keep`, `allocate`) for the context's whole life.
    private func makeContextInfo() -> lws_context_creation_info {
        let protocols = allocate(lws_protocols.self, count: 3)
        protocols[0] = lws_protocols()
        protocols[0].name = UnsafePointer(keep(strdup("http")))
        protocols[0].callback = httpCallback
        protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
        protocols[1] = lws_protocols()
        protocols[1].name = UnsafePointer(keep(strdup(configuration.subprotocol)))
        protocols[1].callback = webSocketCallback
        protocols[1].per_session_data_size = MemoryLayout<UnsafeMutableRawPointer?>.size  // the connection
        // lws allocates this much per connection, for the connection's whole life: at 4 KiB
        // (lws's default) it was over half of what an idle scene holds (issue 27). Messages
        // larger than it arrive in pieces, which the RECEIVE handler joins, so a smaller buffer
        // costs a callback per 2 KiB of a large message (about 10 % more CPU for a 1 MiB one;
        // with permessage-deflate also a read) and saves 2 KiB per connection; nearly every
        // request (a `connect` with its token included) still arrives in one piece.
        protocols[1].rx_buffer_size = Self.receiveBufferBytes
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
        // The vhost (its listening socket) is created apart from the context (`listen`), and
        // fails when it cannot bind its address: without LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND
        // lws creates it with no listening socket when the address is not this machine's (it
        // logs "DOESN'T EXIST" and tries again later), and the server would say it serves.
        info.options = pws_option_disable_ipv6() | pws_option_explicit_vhosts() | pws_option_fail_upon_unable_to_bind()
        info.vhost_name = UnsafePointer(keep(strdup("default")))
        // lws's own timeout for a request's body (the most time between two of its pieces), a
        // file served from `webRoot` (between two of its pieces written) and a connection
        // waiting for a header table.
        info.timeout_secs = UInt32(Self.lwsTimeoutSeconds)
        // The time to send the request line and headers (lws's "ah idle" timeout), longer than
        // `timeout_secs`: lws 4.1 keeps every timeout of the service thread in one list sorted
        // by when it falls due, inserted by a walk from its head. Each accepted connection gets
        // `timeout_secs` (PENDING_TIMEOUT_ESTABLISH_WITH_SERVER) and at once, as its header
        // table is attached, this one instead (PENDING_TIMEOUT_HOLDING_AH), kept until its
        // upgrade. When this is the shorter, the first insert walks past every connection
        // still mid-handshake (all due before it): 1,000–2,300 instructions a resume in a storm
        // of 2,000 under callgrind, with how many are (bench/README.md). On libev lws 4.1 fires
        // these timeouts late (only with the timer it had armed before, see `pev_timer`).
        info.timeout_secs_ah_idle = UInt32(Self.headerTimeoutSeconds(configuration.httpHeaderTimeoutMilliseconds))
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

        return info
    }

    /// Creates the context on `info`, then its one vhost (listening), then the loop's timers.
    /// The two are created apart so that a loop that cannot start and an address that cannot be
    /// listened on each stop the start with their own message.
    private func listen(_ info: inout lws_context_creation_info) throws {
        guard ListenAddress.isIPv4(configuration.host) else {
            throw TransportError.listenFailed(host: configuration.host, port: configuration.port,
                                              reason: "not an IPv4 address (Panes listens on IPv4 only)")
        }
        guard let context = lws_create_context(&info) else {
            throw TransportError.eventLoopFailed(configuration.eventLoop == .libev
                ? "lws could not start on libev (is Debian's libwebsockets-evlib-ev installed?)"
                : "lws could not create its context")
        }
        self.context = context
        // Fails when the address is not this machine's or the port is taken (lws logs why too).
        guard let vhost = lws_create_vhost(context, &info) else {
            throw TransportError.listenFailed(
                host: configuration.host, port: configuration.port,
                reason: ListenAddress.bindFailure(host: configuration.host, port: configuration.port))
        }
        port = Int(lws_get_vhost_listen_port(vhost))
        acceptedOrigins = configuration.origins.policy(bindHost: configuration.host, port: port)
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
        if eventLoop == nil {
            waitNoticeTimer = LoopTimer(context: context, eventLoop: nil) { [unowned self] in
                deliverWaitNotice()
                flushGathered()
            }
        }
        makeWriteTurnWatcher()
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
}
