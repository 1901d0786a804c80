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
    /// Told what happens; set before `run()`.
    public var delegate: (any WebSocketServerDelegate)? {
        get { delegateReference }
        set { delegateReference = newValue }
    }
    /// The port actually listened on (differs from the configuration's when that was 0).
    public internal(set) var port: Int = 0
    /// The origins and `Host` names accepted, known once listening (the port may be chosen then).
    public var originPolicy: OriginPolicy { acceptedOrigins }

    // What every connection's callbacks read is stored in properties no other module can
    // reach, behind the public ones above and `refusingConnections`. The compiler checks
    // overlapping access to a class's stored property at run time (a call into the Swift
    // runtime on each access, a resume made ~50) unless it can see every access and none
    // overlaps another, which it cannot for a property public to other modules.
    weak var delegateReference: (any WebSocketServerDelegate)?
    var acceptedOrigins = OriginPolicy(allowed: [])
    var refusal: String?

    var context: OpaquePointer?
    /// The libev loop lws runs on (`EventLoop.libev`); ours, so `stop()` can break it.
    var eventLoop: UnsafeMutableRawPointer?
    /// Open WebSocket connections by number (`ConnectionTable`: numbers are ours, so not SipHashed).
    var connections = ConnectionTable<ServerConnection>()
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
    /// Connections with frames gathered during the current callback (`flushGathered`), and
    /// whether there are any: every callback asks, and a `Bool`'s accesses are checked at
    /// compile time where the array's are checked at run time (see `delegateReference`).
    var gathering: [ServerConnection] = []
    var anyGathered = false
    /// Connections whose reply waits for a write turn before the loop waits again, and the
    /// libev watcher that gives it (`WebSocketServer+WriteTurns.swift`), which also calls
    /// `serverWillWait()` when it is owed (`notifyBeforeWaiting`); on lws's poll loop a timer
    /// due at once calls it instead.
    var writeTurns: [ServerConnection] = []
    var writeTurnWatcher: UnsafeMutablePointer<pev_prepare>?
    var waitNoticeOwed = false
    var waitNoticeTimer: LoopTimer?
    /// Write turns taken that way, for tests.
    var writeTurnsTaken: Int { turnsTaken }
    var turnsTaken = 0
    /// Close handshakes under way, and the connections waiting for one (`WebSocketServer+Closing.swift`).
    var closingHandshakes = 0
    /// The most close handshakes under way at once so far, for tests.
    var closingHandshakesPeak = 0
    var closesWaiting: [ServerConnection] = []
    var closesWaitingHead = 0
    /// Frames that went to a socket in one write with others (`flushGathered`), for tests.
    var framesWrittenTogether: Int { writtenTogether }
    var writtenTogether = 0
    /// Why new WebSocket upgrades are refused (503, `Retry-After: 1`), nil while they are
    /// accepted: the server is draining, or its cluster node has lost its lease or is rejoining
    /// under a new identity.
    /// The reason is the response's body, so a client or an operator reading it knows which.
    public var refusingConnections: String? {
        get { refusal }
        set { refusal = newValue }
    }
    let idle: IdleDetector
    private let inbox = Inbox()
    private let stopRequested = Atomic<Bool>(false)
    /// The idle detector's one timer, set for its earliest deadline.
    var idleTimer: LoopTimer?
    /// The delegate's one wake-up timer (`wake(atMonotonicMilliseconds:)`).
    var wakeTimer: LoopTimer?
    /// Who each accepted socket counts as, noted at accept for the upgrade's checks.
    var acceptedPeers = AcceptedPeers()
    /// Connections still sending their headers, and the caps on them.
    var unfinishedHeaders: UnfinishedHeaders
    /// The configuration's path and subprotocol as bytes, which every upgrade compares.
    let webSocketPathBytes: [UInt8]
    let subprotocolBytes: [UInt8]
    /// C strings and structs lws keeps pointers to for the context's whole life.
    var retained: [UnsafeMutableRawPointer] = []

    public init(configuration: TransportConfiguration) {
        self.configuration = configuration
        webSocketPathBytes = Array(configuration.webSocketPath.utf8)
        subprotocolBytes = Array(configuration.subprotocol.utf8)
        idle = IdleDetector(pingAfterMilliseconds: configuration.idlePingMilliseconds)
        unfinishedHeaders = UnfinishedHeaders(maxTotal: configuration.maxConnectionsInHeaders,
                                              maxPerAddress: configuration.maxConnectionsInHeadersPerAddress)
    }

    deinit {
        idleTimer?.invalidate()
        wakeTimer?.invalidate()
        httpDeadlineTimer?.invalidate()
        httpWriteTimer?.invalidate()
        waitNoticeTimer?.invalidate()
        dropWriteTurnWatcher()
        if let context { lws_context_destroy(context) }
        if let eventLoop { pev_loop_destroy(eventLoop) }
        for pointer in retained { free(pointer) }
    }

    /// Runs the service loop on the calling thread until `stop()`.
    public func run() {
        guard let context else { return }
        if let eventLoop {
            if !stopRequested.load(ordering: .acquiring) { pev_run(eventLoop) }
            return
        }
        // A notice asked for before the timer existed (`notifyBeforeWaiting`).
        if waitNoticeOwed { waitNoticeTimer?.schedule(afterMilliseconds: 0) }
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
        if takeWriteTurnBeforeWaiting(connection) { return }
        lws_callback_on_writable(connection.wsi)
    }

    /// Whether a frame may be written outside a WRITEABLE callback: only when lws holds none
    /// of an earlier write (`lws_partial_buffered`), the peer has not begun closing, no
    /// extension is in use (permessage-deflate may need more than one callback per frame), and
    /// the frame is not caused by a message of the same connection: lws answers a ping on the
    /// connection's next WRITEABLE turn, so a reply written at once could overtake the pong of
    /// a ping the client sent before its request (on libev such a reply gets a write turn
    /// before the loop waits again, `takeWriteTurnBeforeWaiting`).
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

    /// `body` with the server a callback is for (the context's user pointer), without a retain
    /// and release around it: the context holds it unretained, and the server outlives its
    /// context (`deinit` destroys the context first). Nil when the context has no server.
    /// `_withUnsafeGuaranteedRef` is underscored (not stable API), taken for the retain and
    /// release it saves on every callback; without it, `takeUnretainedValue()` is the fallback.
    static func with<R>(_ wsi: OpaquePointer, _ body: (WebSocketServer) -> R) -> R? {
        guard let context = lws_get_context(wsi), let user = lws_context_user(context) else { return nil }
        return Unmanaged<WebSocketServer>.fromOpaque(user)._withUnsafeGuaranteedRef(body)
    }

    /// Installs SIGTERM, SIGINT and SIGHUP handlers that wake this server's service loop.
    public func installSignalHandlers() {
        SignalRelay.install(context: context)
    }
}

public enum TransportError: Error, CustomStringConvertible {
    /// The address and port could not be listened on; `reason` says why when known (the
    /// kernel's answer to a bind, or that the host is not an IPv4 address).
    case listenFailed(host: String, port: Int, reason: String?)
    case eventLoopFailed(String)

    public var description: String {
        switch self {
        case .listenFailed(let host, let port, let reason):
            "could not listen on \(host):\(port)" + (reason.map { ": \($0)" } ?? "")
        case .eventLoopFailed(let reason): reason
        }
    }
}
