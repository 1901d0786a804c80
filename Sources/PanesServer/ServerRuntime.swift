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
import PanesThreads
public import PanesTransport

/// The running server: the hub, the transport, the codec and the store, joined.
///
/// It performs the hub's effects in order, with one rule on top: output that follows a
/// `persist` waits until that persist is durable (see `Effect`).
public final class ServerRuntime: @unchecked Sendable {
    public let transport: WebSocketServer
    var hub: Hub
    let worker: StoreWorker
    let store: any Store
    /// How the other threads' closures reach the runtime (weakly).
    let box: WeakBox
    /// This process as a node of a cluster; nil alone.
    let cluster: ClusterNode?
    let logger: Logger
    let settings: Settings

    /// Where output waits for durability (`Effect`'s contract).
    var gate = DurabilityGate<Output>()
    /// When draining gives up (monotonic clock).
    var drainDeadline: Millis?
    var storeFailed = false
    var metrics = RuntimeMetrics()
    /// When the transport will next wake us (monotonic clock), so it is re-armed only when that moves.
    var armedDeadline: Millis?
    /// Events were performed since the wake-up was last armed: `armWake` is owed before the
    /// loop waits (`WebSocketServer.notifyBeforeWaiting`).
    var wakeOwed = false
    /// Connections not read from until their held output drains (`maxHeldPerConnection`).
    var pausedConnections: Set<UInt64> = []
    public private(set) var exitCode: Int32 = 0
    /// More Prometheus text for `/metrics`, from parts the runtime does not own (the webhook
    /// engine). Called on the service thread; set before `run()`.
    public var metricsExtension: (@Sendable () -> String)?
    /// Called on the service thread once a store write that carried webhook events is durable
    /// (the delivery engine's `wake`), so they go out without waiting for its next look.
    public var webhooksWritten: (@Sendable () -> Void)?
    /// A write with webhook events was handed to the store since the last durable report.
    var webhooksPending = false
    /// Builds a hub on a stored state for a node identity: at start, and after a rejoin.
    let makeHub: (StoredState, NodeID?) -> Hub
    /// The identity whose lease ended, from then until the node serves again under a new one
    /// (`registered`, then the state reloaded for it).
    var rejoining: NodeID?
    var registered: NodeID?
    /// Why new upgrades are refused now (nil: they are not); the transport answers them 503
    /// with its body.
    var refusal: ConnectionRefusal? {
        didSet { transport.refusingConnections = refusal?.body }
    }
    /// Connections closed when the lease ended: whatever they still send is not for any hub.
    var retired: Set<UInt64> = []
    /// The other nodes gone, as last told (`nodesExpired` is the whole set each time), for a
    /// hub built after a rejoin.
    var gone: [NodeID] = []
    /// The nodes alive, as read newest (`nodesAlive`), for a hub built after a rejoin: the
    /// notices that came while it rejoined (a joining node's `scenesWanted`) reached no hub.
    var alive: (nodes: [NodeID], readBegan: Millis) = ([], 0)

    enum Output {
        /// `reply` names the request a frame answers, to time it.
        case frame(OutboundFrame, [UInt64], reply: RequestID? = nil)
        /// A frame for one connection (a reply, an event for one scene): `frame` without an
        /// array made and freed for its one recipient.
        case frameTo(OutboundFrame, UInt64, reply: RequestID?)
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

    /// Joins the parts; starts nothing (no thread, no socket, no read of the store): call
    /// `start()`, then `run()` on the thread that should serve.
    public init(configuration: ServerConfiguration, transport transportConfiguration: TransportConfiguration,
                store: any Store, authenticator: Authenticator, secretHasher: SecretHasher, serverVersion: String,
                cluster: ClusterNode? = nil, apiKeys: APIKeyring = APIKeyring(),
                reloadAPIKeys: (@Sendable () throws -> APIKeyring)? = nil, ids: IdentifierSource = .system,
                logger: Logger) {
        self.logger = logger
        self.store = store
        apiGate = APIGate(keyring: apiKeys, settings: configuration.settings, hash: secretHasher.hash)
        self.reloadAPIKeys = reloadAPIKeys
        self.cluster = cluster
        self.settings = configuration.settings
        makeHub = { stored, node in
            Hub(settings: configuration.settings, configurations: configuration.sceneConfigurations,
                authenticator: authenticator, secretHasher: secretHasher, stored: stored,
                preferenceDefaults: configuration.preferenceDefaults,
                managedPreferences: configuration.managedPreferences,
                serverVersion: serverVersion, node: node, webhookEndpoints: configuration.webhookEndpoints,
                logger: logger, now: ServerRuntime.wallClock, monotonic: ServerRuntime.monotonicClock, ids: ids)
        }
        // Replaced by a hub on the stored state in `start()`; this one never sees an event.
        hub = makeHub(StoredState(), cluster?.node)
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
                             policy: store.shared != nil ? .sharedStore : .fatal,
                             commitOutcomeTimeoutMs: configuration.settings.commitOutcomeTimeoutMs,
                             onApplied: { report in box.runtime?.transport.post { box.runtime?.applied(report) } },
                             onFailure: { reason in box.runtime?.transport.post { box.runtime?.storeDidFail(reason) } },
                             onLoaded: { result in box.runtime?.transport.post { box.runtime?.didLoad(result) } },
                             onConflict: store.shared != nil ? resolver : nil,
                             fencing: cluster?.node, leaseMs: configuration.settings.nodeLeaseMs,
                             onRevoked: { node in box.runtime?.transport.post { box.runtime?.revoked(node) } },
                             onRejoined: { state in box.runtime?.transport.post { box.runtime?.reloaded(state) } })
        self.box = box
        box.runtime = self
        transport.delegate = self
    }

    /// Loads the stored state into a hub, registers the node (in a cluster), starts listening
    /// and the store thread, in that order; then call `run()` on the thread that should serve.
    /// Throws, having started nothing that keeps running, when the store cannot be read, the
    /// node cannot register, or the port cannot be bound.
    public func start() throws {
        let stored = try store.loadState()
        hub = makeHub(stored, cluster?.node)
        // Registered before the store thread writes anything: its writes are fenced on the node's row.
        try cluster?.start({ [box] notice in box.runtime?.transport.post { box.runtime?.noticed(notice) } },
                           membership: { [box] change in box.runtime?.transport.post { box.runtime?.membership(change) } })
        do {
            try transport.start()
        } catch {
            cluster?.stop()
            throw error
        }
        worker.start()
        perform(hub.start())
        logger.info("loaded", metadata: ["sessions": "\(stored.sessions.count)", "node": "\(cluster?.node.rawValue ?? "-")"])
    }

    /// Serves until drained (SIGTERM) or stopped, then stops the threads in this order: the
    /// heartbeat and the listener (nothing more is read from other nodes), then the store
    /// thread, which commits what is pending first. Returns the process exit code.
    public func run() -> Int32 {
        transport.installSignalHandlers()
        armWake()
        transport.run()
        cluster?.stop()
        worker.stop()
        return exitCode
    }

    /// Timestamps: stored, sent, compared with other nodes' and with tokens' expiries.
    public static let wallClock: @Sendable () -> Millis = { Millis(Date().timeIntervalSince1970 * 1000) }
    /// Deadlines, timeouts and intervals: setting the wall clock moves none of them.
    public static let monotonicClock: @Sendable () -> Millis = { MonotonicInstant.now().milliseconds }

    // MARK: Effects

    /// Carries out the hub's effects in the order `Effect`'s documentation states: store work
    /// is handed to the store thread before the output listed ahead of it, but for a persist,
    /// whose output before it goes first; output keeps its order, and so does store work.
    /// Output waits in `effects` itself (from `held` on) rather than in an array of its own:
    /// every event is performed, a resume's two included. The array then goes back to the hub,
    /// whose next event's effects are written into it (`Hub.recycle`), and the wake-up is armed
    /// for the hub's next deadline before the loop waits again (`armWake`).
    func perform(_ effects: consuming [Effect]) {
        var held = effects.startIndex
        for index in effects.indices {
            switch effects[index] {
            case .send, .sendNow, .sendUnapplied, .broadcast, .close, .probe:
                continue
            case .persist:
                executeOutput(effects[held..<index])
                held = index + 1
                execute(effects[index])
            case .persistQuietly, .commit, .signal, .load, .checkNodes:
                execute(effects[index])
            }
        }
        executeOutput(effects[held...])
        hub.recycle(effects)
        // The next deadline is read once before the loop waits, not after every event: a
        // reconnect storm's resumes come many to a loop turn (`serverWillWait`).
        if !wakeOwed {
            wakeOwed = true
            transport.notifyBeforeWaiting()
        }
    }

    /// The output among `effects`, in order (their store work was carried out already).
    /// By index, as `perform` does: each effect read in place, not copied out (and destroyed
    /// again) by the loop (a resume's reply, ~300 instructions, issue 27).
    private func executeOutput(_ effects: ArraySlice<Effect>) {
        for index in effects.indices {
            switch effects[index] {
            case .send, .sendNow, .sendUnapplied, .broadcast, .close, .probe: execute(effects[index])
            case .persist, .persistQuietly, .commit, .signal, .load, .checkNodes: continue
            }
        }
    }

    func execute(_ effect: Effect) {
        switch effect {
        case .send(let message, let connection) where Hub.isServiceConnection(connection):
            if let response = apiResponse(message, to: connection.rawValue) { emit(response) }
        case .send(let message, let connection):
            emit(.frameTo(encode(message), connection.rawValue, reply: message.replyTo))
        case .sendUnapplied(let message, let connection) where Hub.isServiceConnection(connection):
            if let response = apiResponse(message, to: connection.rawValue) { emitUnapplied(response) }
        case .sendUnapplied(let message, let connection):
            emitUnapplied(.frameTo(encode(message), connection.rawValue, reply: message.replyTo))
        case .sendNow(let message, let connection):
            deliver(.frameTo(encode(message), connection.rawValue, reply: message.replyTo))
        case .broadcast(let message, let connections):
            emit(.frame(encode(message), connections.map(\.rawValue)))
        case .persist(let commands):
            if webhooksWritten != nil, !webhooksPending { webhooksPending = commands.contains(where: \.isWebhook) }
            worker.submit(.persist(commands), sequence: gate.persistSubmitted())
        case .persistQuietly(let commands):
            // Handed over with the turn's others before the loop waits (`serverWillWait`).
            worker.submitQuietly(.persist(commands))
        case .commit(let commit):
            if webhooksWritten != nil, !webhooksPending { webhooksPending = commit.commands.contains(where: \.isWebhook) }
            // Holds nothing back: the hub says nothing about a commit until its outcome.
            worker.submit(.commit(commit), sequence: nil)
        case .close(let connection, _, _) where Hub.isServiceConnection(connection):
            break
        case .close(let connection, let code, let reason) where code == .nodeLost:
            // The node may no longer serve (its lease is lost or has ended): the close leaves at
            // once. Through the gate it waited for every persist submitted before it, and in an
            // outage those wait for the database this node cannot reach: the window stayed on
            // a node that had stopped serving it until the database came back (a 25 s restart
            // in the cluster tests; a partition until it healed), not sent on to another node.
            // What is held for the connection is never answered to it (a closed connection is
            // sent nothing): the window resumes elsewhere and sends again what it was not told.
            deliver(.close(connection.rawValue, code, reason))
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

    func encode(_ message: ServerMessage) -> OutboundFrame {
        JSONCodec.encode(message, headroom: OutboundFrame.headroom) { OutboundFrame(adopting: $0) }
    }

    /// Asks the transport to wake us at the hub's next deadline (or the drain's), and only
    /// then: an idle server sleeps. Called before the loop waits whenever events were performed
    /// since it last waited (`serverWillWait`), and where the runtime starts and wakes.
    func armWake() {
        wakeOwed = false
        // `hub.nextDeadline` read in place: read as `hub.nextDeadline` from this class, the
        // whole `Hub` value is copied first (the getter is another module's, so the compiler
        // cannot tell it leaves `hub` alone), thousands of instructions on every turn.
        func read(_ hub: inout Hub) -> Millis? { hub.nextDeadline }
        let next = read(&hub).earlier(drainDeadline)
        guard let next, next != armedDeadline else { return }
        armedDeadline = next
        transport.wake(afterMilliseconds: Int(max(0, next - Self.monotonicClock())))
    }

    func deliver(_ output: Output) {
        switch output {
        case .frame(let frame, let connections, let reply):
            for connection in connections { transport.send(frame, to: connection) }
            if let reply, let connection = connections.first { metrics.replied(reply, on: connection) }
        case .frameTo(let frame, let connection, let reply):
            transport.send(frame, to: connection)
            if let reply { metrics.replied(reply, on: connection) }
        case .close(let connection, let code, let reason):
            transport.close(connection, code: code.rawValue, reason: reason)
        case .probe(let connection):
            transport.ping(connection)
        case .http(let request, let response):
            _ = transport.respond(to: request, with: response)
        }
    }

    /// A store that cannot commit is fatal: nothing waiting on it was acknowledged, so
    /// nothing acknowledged is lost; the process exits non-zero for its supervisor to restart.
    func storeDidFail(_ reason: String) {
        logger.critical("store failed; exiting without acknowledging", metadata: ["reason": "\(reason)"])
        storeFailed = true
        exitCode = 1
        transport.stop()
    }

    // MARK: Draining

    func checkDrain() {
        guard let deadline = drainDeadline else { return }
        let flushed = hub.drained && gate.isClear
            && hub.commitsInFlight == 0
        if (flushed && transport.connectionCount == 0) || Self.monotonicClock() >= deadline {
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
        case .frameTo(_, let connection, _), .close(let connection, _, _), .probe(let connection): [connection]
        case .http: []
        }
    }
}

/// Lets the store thread's closures reach the runtime without a retain cycle.
final class WeakBox: @unchecked Sendable {
    weak var runtime: ServerRuntime?
}

extension StoreCommand {
    var isWebhook: Bool { if case .enqueueWebhooks = self { true } else { false } }
}
