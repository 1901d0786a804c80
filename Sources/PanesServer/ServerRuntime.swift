// Threading model: `run()` makes the calling thread the lws service thread. The hub, the
// held-output queue and every transport call live on that thread only. The store thread
// reports commits through `WebSocketServer.post`, so its completions also run here. That
// single owner is why the class is `@unchecked Sendable`.
//
// In a cluster, a node whose lease has ended (`ClusterNode.Membership.revoked`, or the store
// thread's fence: `NodeRevoked`) stops at once: every connection is closed with 4011, output
// held for durability is dropped, and until it has registered a new identity and reloaded the
// state (`rejoining`), it takes no connection and hands nothing to a hub. It then serves again
// with a hub built afresh, as a restarted process would (`Hub+Cluster.swift`, "Leases").
import Foundation
public import Logging
public import PanesCore
import PanesJSON
public import PanesTransport

/// The running server: the hub, the transport, the codec and the store, joined.
///
/// It performs the hub's effects in order, with one rule on top: output that follows a
/// `persist` waits until that persist is durable (see `Effect`).
public final class ServerRuntime: @unchecked Sendable {
    public let transport: WebSocketServer
    var hub: Hub
    private let worker: StoreWorker
    /// This process as a node of a cluster; nil alone.
    private let cluster: ClusterNode?
    let logger: Logger
    let settings: Settings

    private var submittedSequence: UInt64 = 0
    private var durableSequence: UInt64 = 0
    /// Output waiting for a persist to become durable, in order.
    private var held: [(sequence: UInt64, output: Output)] = []
    private var heldHead = 0
    private var drainDeadline: Millis?
    private var storeFailed = false
    var metrics = RuntimeMetrics()
    /// When the transport will next wake us (wall clock), so it is re-armed only when that moves.
    private var armedDeadline: Millis?
    /// Messages held for durability per connection, and the connections not read from
    /// meanwhile (`maxHeldPerConnection`).
    private var heldPerConnection: [UInt64: Int] = [:]
    private var pausedConnections: Set<UInt64> = []
    public private(set) var exitCode: Int32 = 0
    /// More Prometheus text for `/metrics`, from parts the runtime does not own (the webhook
    /// engine). Called on the service thread; set before `run()`.
    public var metricsExtension: (@Sendable () -> String)?
    /// Called on the service thread once a store write that carried webhook events is durable
    /// (the delivery engine's `wake`), so they go out without waiting for its next look.
    public var webhooksWritten: (@Sendable () -> Void)?
    /// A write with webhook events was handed to the store since the last durable report.
    private var webhooksPending = false
    /// Builds a hub on a stored state for a node identity: at start, and after a rejoin.
    private let makeHub: (StoredState, NodeID?) -> Hub
    /// The identity whose lease ended, from then until the node serves again under a new one
    /// (`registered`, then the state reloaded for it).
    private var rejoining: NodeID?
    private var registered: NodeID?
    /// Connections closed when the lease ended: whatever they still send is not for any hub.
    private var retired: Set<UInt64> = []
    /// The other nodes gone, as last told (`nodesExpired` is the whole set each time), for a
    /// hub built after a rejoin.
    private var gone: [NodeID] = []

    enum Output {
        /// `reply` names the request a frame answers, to time it.
        case frame(OutboundFrame, [UInt64], reply: RequestID? = nil)
        case close(UInt64, CloseCode, String)
        case probe(UInt64)
        /// The answer to an HTTP API request (`ServerRuntime+HTTP.swift`).
        case http(UInt64, HTTPResponse)
    }

    /// The HTTP API's keys and rate limits (`ServerRuntime+HTTP.swift`).
    var apiGate: APIGate
    /// Reads the API keys again (SIGHUP); nil when the server was started without a keys file.
    let reloadAPIKeys: (@Sendable () throws -> APIKeyring)?
    /// API requests handed to the hub, by their service connection: the transport's request id
    /// and the status a success gets.
    var apiRequests: [UInt64: (request: UInt64, successStatus: Int)] = [:]
    var nextServiceConnection: UInt64 = 0

    /// Loads the stored state, starts listening and the store thread. Call `run()` next, on
    /// the thread that should serve.
    public init(configuration: ServerConfiguration, transport transportConfiguration: TransportConfiguration,
                store: any Store, authenticator: Authenticator, secretHasher: SecretHasher, serverVersion: String,
                cluster: ClusterNode? = nil, apiKeys: APIKeyring = APIKeyring(),
                reloadAPIKeys: (@Sendable () throws -> APIKeyring)? = nil, logger: Logger) throws {
        self.logger = logger
        apiGate = APIGate(keyring: apiKeys, settings: configuration.settings, hash: secretHasher.hash)
        self.reloadAPIKeys = reloadAPIKeys
        self.cluster = cluster
        self.settings = configuration.settings
        let stored = try store.loadState()
        makeHub = { stored, node in
            Hub(settings: configuration.settings, configurations: configuration.sceneConfigurations,
                authenticator: authenticator, secretHasher: secretHasher, stored: stored,
                preferenceDefaults: configuration.preferenceDefaults,
                managedPreferences: configuration.managedPreferences,
                serverVersion: serverVersion, node: node, webhookEndpoints: configuration.webhookEndpoints,
                logger: logger, now: ServerRuntime.wallClock)
        }
        hub = makeHub(stored, cluster?.node)
        transport = WebSocketServer(configuration: transportConfiguration)
        let box = WeakBox()
        let waitMs = configuration.settings.conflictRetryWaitMs
        let resolver: @Sendable (Commit, [StoredOperation]) -> Commit? = { commit, operations in
            // On the store thread, the document's lock held: the hub makes the retry.
            guard let runtime = box.runtime else { return nil }
            let resolution = ConflictResolution()
            runtime.transport.post { runtime.resolve(commit, operations, resolution) }
            return resolution.wait(timeoutMs: waitMs)
        }
        worker = StoreWorker(store: store, logger: logger,
                             checkpointIntervalMs: configuration.settings.walCheckpointIntervalMs,
                             quietWriteDelayMs: configuration.settings.quietWriteDelayMs,
                             // A shared store is across a network: it goes away and comes back.
                             policy: store is any SharedStore ? .sharedStore : .fatal,
                             commitOutcomeTimeoutMs: configuration.settings.commitOutcomeTimeoutMs,
                             onApplied: { report in box.runtime?.transport.post { box.runtime?.applied(report) } },
                             onFailure: { reason in box.runtime?.transport.post { box.runtime?.storeDidFail(reason) } },
                             onLoaded: { result in box.runtime?.transport.post { box.runtime?.didLoad(result) } },
                             onConflict: store is any SharedStore ? resolver : nil,
                             fencing: cluster?.node, leaseMs: configuration.settings.nodeLeaseMs,
                             onRevoked: { node in box.runtime?.transport.post { box.runtime?.revoked(node) } },
                             onRejoined: { state in box.runtime?.transport.post { box.runtime?.reloaded(state) } })
        box.runtime = self
        transport.delegate = self
        // Registered before the store thread writes anything: its writes are fenced on the node's row.
        try cluster?.start({ notice in box.runtime?.transport.post { box.runtime?.noticed(notice) } },
                           membership: { change in box.runtime?.transport.post { box.runtime?.membership(change) } })
        try transport.start()
        worker.start()
        perform(hub.start())
        logger.info("loaded", metadata: ["sessions": "\(stored.sessions.count)", "node": "\(cluster?.node.rawValue ?? "-")"])
    }

    /// Serves until drained (SIGTERM) or stopped. Returns the process exit code.
    public func run() -> Int32 {
        transport.installSignalHandlers()
        armWake()
        transport.run()
        cluster?.stop()
        worker.stop()
        return exitCode
    }

    public static let wallClock: @Sendable () -> Millis = { Millis(Date().timeIntervalSince1970 * 1000) }

    // MARK: Effects

    /// Carries out the hub's effects, in order but for one thing: what goes to the store
    /// thread (a commit, a load, a signal) is handed over before the socket writes listed ahead
    /// of it. A busy document's turn writes hundreds of frames (the acknowledgements and the
    /// fan-out of a batch), milliseconds of system calls, and its next batch would otherwise
    /// wait for them before the store even starts it. A persist is the exception: the frames
    /// before it must not be held for its durability, so they go first. Frames keep their
    /// order among themselves, and so does the store's work.
    func perform(_ effects: [Effect]) {
        defer { armWake() }
        var frames: [Effect] = []
        for effect in effects {
            switch effect {
            case .send, .sendNow, .broadcast, .close, .probe:
                frames.append(effect)
            case .persist:
                frames.forEach(execute)
                frames.removeAll()
                execute(effect)
            case .persistQuietly, .commit, .signal, .load, .checkNodes:
                execute(effect)
            }
        }
        frames.forEach(execute)
    }

    private func execute(_ effect: Effect) {
        switch effect {
        case .send(let message, let connection) where Hub.isServiceConnection(connection):
            if let response = apiResponse(message, to: connection.rawValue) { emit(response) }
        case .send(let message, let connection):
            emit(.frame(encode(message), [connection.rawValue], reply: message.replyTo))
        case .sendNow(let message, let connection):
            deliver(.frame(encode(message), [connection.rawValue], reply: message.replyTo))
        case .broadcast(let message, let connections):
            emit(.frame(encode(message), connections.map(\.rawValue)))
        case .persist(let commands):
            if webhooksWritten != nil, !webhooksPending { webhooksPending = commands.contains(where: \.isWebhook) }
            submittedSequence += 1
            worker.submit(.persist(commands), sequence: submittedSequence)
        case .persistQuietly(let commands):
            worker.submit(.persist(commands), sequence: nil)
        case .commit(let commit):
            if webhooksWritten != nil, !webhooksPending { webhooksPending = commit.commands.contains(where: \.isWebhook) }
            // Holds nothing back: the hub says nothing about a commit until its outcome.
            worker.submit(.commit(commit), sequence: nil)
        case .close(let connection, _, _) where Hub.isServiceConnection(connection):
            break
        case .close(let connection, let code, let reason):
            emit(.close(connection.rawValue, code, reason))
        case .probe(let connection):
            // A liveness probe never waits for the disk: a slow fsync must not make a live
            // tab look dead and hand its session to a duplicate.
            deliver(.probe(connection.rawValue))
        case .signal(let signal):
            // With the store's writes, so it never overtakes what was written before it.
            worker.submit(.signal(signal), sequence: nil)
        case .load(let request):
            // Runs on the store thread behind every batch submitted so far; `didLoad`
            // brings the result back here.
            worker.load(request)
        case .checkNodes:
            // On the heartbeat's thread and connection: no batch of the store thread is in its way.
            if let cluster { cluster.checkNow() } else { noticed(.nodesChecked(nil)) }
        }
    }

    private func encode(_ message: ServerMessage) -> OutboundFrame {
        OutboundFrame(headroomAndPayload: JSONCodec.encode(message.json, headroom: OutboundFrame.headroom))
    }

    func emit(_ output: Output) {
        if heldHead == held.count && durableSequence == submittedSequence {
            deliver(output)
        } else {
            held.append((submittedSequence, output))
            for connection in output.connections {
                let count = heldPerConnection[connection, default: 0] + 1
                heldPerConnection[connection] = count
                // A client that writes faster than the disk commits is not read from until its
                // answers drain, instead of growing what the server holds for it without end.
                if count >= settings.maxHeldPerConnection, pausedConnections.insert(connection).inserted {
                    transport.pauseReading(connection)
                }
            }
        }
    }

    /// Counts a held output as delivered; reading resumes once a paused connection is half drained.
    private func released(_ output: Output) {
        for connection in output.connections {
            let count = heldPerConnection[connection, default: 1] - 1
            heldPerConnection[connection] = count > 0 ? count : nil
            if count <= settings.maxHeldPerConnection / 2, pausedConnections.remove(connection) != nil {
                transport.resumeReading(connection)
            }
        }
    }

    /// Asks the transport to wake us at the hub's next deadline (or the drain's), and only
    /// then: an idle server sleeps.
    private func armWake() {
        let next = [hubDeadline(), drainDeadline].compactMap { $0 }.min()
        guard let next, next != armedDeadline else { return }
        armedDeadline = next
        transport.wake(afterMilliseconds: Int(max(0, next - Self.wallClock())))
    }

    /// `hub.nextDeadline`, read in place. Read as `hub.nextDeadline` from this class, the whole
    /// `Hub` value is copied first (the getter is another module's, so the compiler cannot tell
    /// it leaves `hub` alone): thousands of instructions on every turn of the loop.
    private func hubDeadline() -> Millis? {
        func read(_ hub: inout Hub) -> Millis? { hub.nextDeadline }
        return read(&hub)
    }

    private func deliver(_ output: Output) {
        switch output {
        case .frame(let frame, let connections, let reply):
            for connection in connections { transport.send(frame, to: connection) }
            if let reply, let connection = connections.first { metrics.replied(reply, on: connection) }
        case .close(let connection, let code, let reason):
            transport.close(connection, code: code.rawValue, reason: reason)
        case .probe(let connection):
            transport.ping(connection)
        case .http(let request, let response):
            _ = transport.respond(to: request, with: response)
        }
    }

    /// A transaction is durable: releases what waited for its persists, then lets the hub
    /// apply its commits. Runs on the service thread (posted by the store thread).
    private func applied(_ report: StoreReport) {
        // Reports of the hub that was given up: nothing of them is said to anyone.
        guard rejoining == nil else { return }
        let start = RuntimeMetrics.now
        if let durable = report.durable { becameDurable(durable) }
        if webhooksPending {
            webhooksPending = false
            webhooksWritten?()
        }
        // One list, so that every next batch these outcomes start goes before any of their frames.
        var effects: [Effect] = []
        for (id, outcome) in report.outcomes { effects += hub.handle(.committed(id, outcome)) }
        perform(effects)
        metrics.fannedOut(since: report.committedAt)
        checkDrain()
        metrics.turn(since: start)
    }

    private func becameDurable(_ sequence: UInt64) {
        durableSequence = max(durableSequence, sequence)
        while heldHead < held.count && held[heldHead].sequence <= durableSequence {
            deliver(held[heldHead].output)
            released(held[heldHead].output)
            heldHead += 1
        }
        if heldHead == held.count {
            held.removeAll(keepingCapacity: held.capacity <= 4096)
            heldHead = 0
        }
    }

    /// A document commit conflicted and the store thread, holding the document's lock, read
    /// what the other nodes committed: the hub applies it (as it would any `behind` outcome)
    /// and its retry is handed back to the store thread. Runs on the service thread.
    private func resolve(_ commit: Commit, _ operations: [StoredOperation], _ resolution: ConflictResolution) {
        guard rejoining == nil else {
            _ = resolution.answer(nil)
            return
        }
        let start = RuntimeMetrics.now
        var effects = hub.handle(.committed(commit.id, .behind(operations)))
        // The retry goes into the store thread's open transaction, where nothing can come
        // before it; it is handed over first, because the lock is held until then and the
        // rest of this turn (sending the other nodes' operations to this node's scenes) is
        // most of its work. Replies to the retry come in a later turn, after those sends.
        var retry: Commit?
        if let index = effects.firstIndex(where: { if case .commit(let next) = $0 { next.channel == commit.channel } else { false } }),
           case .commit(let next) = effects.remove(at: index) {
            retry = next
        }
        if !resolution.answer(retry), let retry {
            // The store thread gave up waiting (`conflictRetryWaitMs`): the ordinary way, then.
            worker.submit(.commit(retry), sequence: nil)
        }
        perform(effects)
        metrics.turn(since: start)
    }

    /// Another node wrote, or leases moved; runs on the service thread (posted by the listener
    /// or the heartbeat thread).
    private func noticed(_ notice: ChangeNotice) {
        if case .nodesExpired(let nodes) = notice { gone = nodes }
        // The hub built after the rejoin reads everything from its own start (`reloaded`).
        guard rejoining == nil else { return }
        let start = RuntimeMetrics.now
        perform(hub.handle(.notice(notice)))
        metrics.turn(since: start)
    }

    /// A read the hub asked for is done; runs on the service thread (posted by the store thread).
    private func didLoad(_ result: LoadResult) {
        guard rejoining == nil else { return }
        perform(hub.handle(.loaded(result)))
    }

    // MARK: A lease that ended (cluster)

    /// The node's identity `node` may no longer serve: its lease has ended, and other nodes may
    /// take its sessions over at any moment (the store refuses its writes from now on). Every
    /// connection is closed with 4011 at once, so their windows reconnect and resume wherever
    /// they land; what waited for durability is never sent (its writes will not commit, or
    /// committed before the end and are found on resuming); the node stops taking connections
    /// and comes back under a new identity (`membership`, then `reloaded`).
    private func revoked(_ node: NodeID) {
        guard rejoining == nil, hub.node == node else { return }
        rejoining = node
        logger.critical("this node's lease has ended; closing every connection and rejoining as a new node",
                        metadata: ["node": "\(node)", "connections": "\(transport.connectionCount)"])
        transport.acceptingConnections = false
        held.removeAll()
        heldHead = 0
        heldPerConnection.removeAll()
        pausedConnections.removeAll()
        durableSequence = submittedSequence
        let closing = hub.closeEveryConnection(.nodeLost, reason: "this node's lease has ended; reconnect")
        for case .close(let connection, _, _) in closing { retired.insert(connection.rawValue) }
        perform(closing)
        cluster?.rejoin(from: node)
    }

    private func membership(_ change: ClusterNode.Membership) {
        switch change {
        case .revoked(let node):
            revoked(node)
        case .joined(let fresh, let gone):
            // The heartbeat found the lease ended and registered anew before the store thread
            // told: the old identity ends here now.
            if rejoining == nil, let old = hub.node, old != fresh { revoked(old) }
            guard rejoining != nil else { return }
            self.gone = gone
            registered = fresh
            worker.rejoin(as: fresh)
        case .liveNodes(let count):
            apiGate.setNodes(count)
            logger.info("live nodes counted; each admits its share of the API's rates", metadata: ["nodes": "\(count)"])
        }
    }

    /// The state reloaded for the new identity: a hub built on it serves from now on. It reads
    /// what other nodes wrote since (`resubscribed`) and knows who is gone.
    private func reloaded(_ state: StoredState) {
        guard rejoining != nil, let fresh = registered else { return }
        rejoining = nil
        registered = nil
        hub = makeHub(state, fresh)
        perform(hub.start())
        perform(hub.handle(.notice(.nodesExpired(gone))))
        perform(hub.handle(.notice(.resubscribed)))
        if drainDeadline == nil { transport.acceptingConnections = true }
        logger.notice("serving again as a new node", metadata: ["node": "\(fresh)", "sessions": "\(state.sessions.count)"])
    }

    /// A store that cannot commit is fatal: nothing waiting on it was acknowledged, so
    /// nothing acknowledged is lost; the process exits non-zero for its supervisor to restart.
    private func storeDidFail(_ reason: String) {
        logger.critical("store failed; exiting without acknowledging", metadata: ["reason": "\(reason)"])
        storeFailed = true
        exitCode = 1
        transport.stop()
    }

    // MARK: Draining

    private func checkDrain() {
        guard let deadline = drainDeadline else { return }
        let flushed = hub.drained && heldHead == held.count && durableSequence == submittedSequence
            && hub.commitsInFlight == 0
        if (flushed && transport.connectionCount == 0) || Self.wallClock() >= deadline {
            logger.notice("drained", metadata: ["connectionsLeft": "\(transport.connectionCount)"])
            transport.stop()
        }
    }
}

extension ServerRuntime.Output {
    /// The connections an output goes to.
    var connections: [UInt64] {
        switch self {
        case .frame(_, let connections, _): connections
        case .close(let connection, _, _), .probe(let connection): [connection]
        case .http: []
        }
    }
}

extension ServerRuntime: WebSocketServerDelegate {
    public func serverDidOpen(_ connection: UInt64) {
        guard rejoining == nil else {
            // Upgraded just before the node stopped taking connections.
            retired.insert(connection)
            transport.close(connection, code: CloseCode.nodeLost.rawValue, reason: "this node is rejoining; reconnect")
            return
        }
        let start = RuntimeMetrics.now
        metrics.opened(connection)
        perform(hub.handle(.opened(ConnectionID(connection), peer: transport.peer(of: connection))))
        metrics.turn(since: start)
    }

    public func serverDidReceive(_ message: UnsafeRawBufferPointer, from connection: UInt64) {
        guard rejoining == nil, !retired.contains(connection) else { return }
        let start = RuntimeMetrics.now
        defer { metrics.turn(since: start) }
        let event: HubEvent
        let id = ConnectionID(connection)
        switch JSONCodec.decode(message, maxDepth: settings.maxJSONDepth) {
        case .success(let json):
            metrics.received(json, on: connection, at: start)
            event = .received(id, json)
        case .failure(let error) where error.kind == .tooDeep:
            event = .refused(id, PanesError(.nestingTooDeep, "the frame's \(error.description) (setting `maxJSONDepth`)"))
        case .failure(let error) where error.kind == .numberOutOfRange:
            event = .refused(id, PanesError(.numberOutOfRange, "a number in the frame is out of range: \(error.description); integers must fit in 64 bits"))
        case .failure(let error):
            event = .unreadable(id, reason: error.description)
        }
        perform(hub.handle(event))
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

    public func serverDidReceiveTerminationSignal() {
        guard drainDeadline == nil else { return }
        logger.notice("termination signal: draining")
        drainDeadline = Self.wallClock() + Millis(settings.drainTimeoutMs)
        transport.acceptingConnections = false
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

    private func metricsText() -> String {
        var text = PrometheusText()
        text.gauge("panes_connections", "Open WebSocket connections.", [([:], transport.connectionCount)])
        let store = worker.statistics
        text.counter("panes_store_commits_total", "Store transactions committed (group commits).", [([:], store.commits)])
        text.counter("panes_store_writes_total", "Persists and channel commits applied.", [([:], store.writes)])
        text.gauge("panes_store_pending_batches", "Batches waiting for the store thread.", [([:], store.pending)])
        text.gauge("panes_store_held_writes", "Persists kept for retry while a shared store is unavailable.",
                   [([:], worker.stalledWrites)])
        text.gauge("panes_held_messages", "Outbound messages waiting for durability.", [([:], held.count - heldHead)])
        text.gauge("panes_connections_paused", "Connections not read from until their held messages drain (maxHeldPerConnection).",
                   [([:], pausedConnections.count)])
        let documents = hub.documentCounts
        text.gauge("panes_documents", "Workspace documents stored.", [([:], documents.stored)])
        text.gauge("panes_documents_loaded", "Documents held in memory (some scene has them open).",
                   [([:], documents.loaded)])
        text.gauge("panes_documents_loading", "Documents being read from the store to be opened.",
                   [([:], documents.loading)])
        text.histogram("panes_request_duration_seconds",
                       "From a request's receipt to its reply leaving (durability included), by type.",
                       metrics.acks.sorted { $0.key < $1.key }.map { (["type": $0.key], $0.value) })
        text.histogram("panes_connect_duration_seconds", "From a socket opening to its `connect` reply leaving.",
                       [([:], metrics.connects)])
        text.histogram("panes_store_commit_duration_seconds", "Time to apply and make durable one store transaction.",
                       [([:], worker.commitDurations)])
        text.histogram("panes_store_conflict_wait_seconds",
                       "Cluster: how long the store thread, holding a document's lock after a conflict, waited for the retry.",
                       [([:], worker.conflictWaits)])
        text.histogram("panes_fanout_duration_seconds",
                       "From a store transaction being durable to the last message it caused being queued.",
                       [([:], metrics.fanOut)])
        text.histogram("panes_loop_turn_duration_seconds",
                       "Time the service thread spends on Panes' work per event (a frame, an open, a commit).",
                       [([:], metrics.turns)])
        ProcessMetrics.render(into: &text)
        return text.text + hub.metricsText() + (metricsExtension?() ?? "")
    }
}

/// Lets the store thread's closures reach the runtime without a retain cycle.
private final class WeakBox: @unchecked Sendable {
    weak var runtime: ServerRuntime?
}

extension StoreCommand {
    var isWebhook: Bool { if case .enqueueWebhooks = self { true } else { false } }
}
