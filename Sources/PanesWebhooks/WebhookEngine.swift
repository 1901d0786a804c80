// Threading: two threads of the engine's own, never the service thread. The outbox thread
// (`run`) alone uses the outbox and the per-endpoint counts; the HTTP thread (in
// `WebhookHTTPClient`) alone uses curl. Finished attempts go from the HTTP thread to the outbox
// thread through `results` under `condition`, which also carries `wake()` and `stop()` from any
// thread and guards the metrics. That is why the class can be `@unchecked Sendable`.
import Foundation
public import Logging
public import PanesCore
import PanesJSON

/// Delivers the outbox's webhook events: claims what is due for each endpoint (up to its
/// share of concurrent deliveries), signs and POSTs it, and records the outcome: delivered
/// (the row goes), retried later with backoff, or given up on and kept.
///
/// At least once: an attempt whose outcome is lost (the node died, the outbox was down when
/// it ended) is made again once its lease runs out, with the same `webhook-id`. In order per
/// document: the outbox hands out only the first undelivered event of each ordering key.
public final class WebhookEngine: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var endpoints: [WebhookEndpoint]
        /// This process's name in leases; unique among nodes sharing an outbox.
        public var node: String
        public var leaseMs: Int64
        public var pollMs: Int64
        public var coalesceMs: Int64
        public var endpointConcurrency: Int
        public var connectTimeoutMs: Int
        public var timeoutMs: Int
        public var maxResponseBytes: Int
        public var retry: WebhookRetryPolicy

        public init(settings: Settings, endpoints: [WebhookEndpoint], node: String) {
            self.endpoints = endpoints
            self.node = node
            leaseMs = Int64(settings.webhookLeaseMs)
            pollMs = Int64(settings.webhookPollMs)
            coalesceMs = Int64(settings.webhookCoalesceMs)
            endpointConcurrency = settings.webhookEndpointConcurrency
            connectTimeoutMs = settings.webhookConnectTimeoutMs
            timeoutMs = settings.webhookTimeoutMs
            maxResponseBytes = settings.webhookMaxResponseBytes
            retry = WebhookRetryPolicy(settings: settings)
        }
    }

    /// An attempt that ended, on its way to the outbox thread.
    private struct Finished {
        let delivery: WebhookDelivery
        let response: WebhookResponse
    }

    private let outbox: any WebhookOutbox
    public let configuration: Configuration
    private let endpoints: [String: WebhookEndpoint]
    private let signers: [String: WebhookSigner]
    private let http: WebhookHTTPClient
    private let logger: Logger
    private let clock: @Sendable () -> Millis
    private let jitter: @Sendable () -> Double

    private let condition = NSCondition()
    private var results: [Finished] = []
    private var woken = false
    private var stopping = false
    private var state = WebhookMetrics()

    // The outbox thread's.
    private var inFlight: [String: Int] = [:]
    private var nextMaintenance: Millis = 0
    private var rotation = 0
    private var lastFailureLog: Millis = 0
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - outbox: used only on the engine's outbox thread from `start` on.
    ///   - clock: wall-clock milliseconds (due times, leases on a local outbox, timestamps).
    ///   - jitter: a random number in 0..<1 per retry.
    /// - Throws: `PanesError` for an endpoint whose secret is not a Standard Webhooks one, two
    ///   endpoints with one id, or a lease not longer than the timeout.
    public init(outbox: any WebhookOutbox, configuration: Configuration, logger: Logger,
                clock: @escaping @Sendable () -> Millis = WebhookEngine.wallClock,
                jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) throws {
        var signers: [String: WebhookSigner] = [:]
        var endpoints: [String: WebhookEndpoint] = [:]
        for (index, endpoint) in configuration.endpoints.enumerated() {
            guard endpoints[endpoint.id] == nil else { throw PanesError.invalid("webhooks[\(index)].id", "`\(endpoint.id)` is used twice") }
            signers[endpoint.id] = try WebhookSigner(secret: endpoint.secret, field: "webhooks[\(index)].secret")
            endpoints[endpoint.id] = endpoint
        }
        guard configuration.leaseMs > Int64(configuration.timeoutMs) else {
            throw PanesError.invalid("settings.webhookLeaseMs",
                                     "must be longer than webhookTimeoutMs (\(configuration.timeoutMs)), or a slow attempt's delivery would be claimed again while it is under way")
        }
        self.outbox = outbox
        self.configuration = configuration
        self.endpoints = endpoints
        self.signers = signers
        self.logger = logger
        self.clock = clock
        self.jitter = jitter
        http = try WebhookHTTPClient()
    }

    public static let wallClock: @Sendable () -> Millis = { Millis(Date().timeIntervalSince1970 * 1000) }

    /// Starts the outbox and HTTP threads.
    public func start() {
        guard thread == nil else { return }
        http.start()
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "webhook-outbox"
        self.thread = thread
        thread.start()
    }

    /// Stops both threads, waiting for them. Attempts under way are abandoned: their leases run
    /// out and they are made again (by this node after a restart, or by another).
    public func stop() {
        guard thread != nil else { return }
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
        http.stop()
        thread = nil
    }

    /// Look in the outbox now (events were just written). Safe from any thread.
    public func wake() {
        condition.lock()
        woken = true
        condition.broadcast()
        condition.unlock()
    }

    /// A copy of the counts, safe from any thread.
    public var metrics: WebhookMetrics {
        condition.lock()
        defer { condition.unlock() }
        return state
    }

    // MARK: The outbox thread

    private func run() {
        var nextLook: Millis = 0
        while true {
            condition.lock()
            while !stopping, results.isEmpty, !woken {
                let wait = nextLook - clock()
                if wait <= 0 { break }
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(wait) / 1_000))
            }
            if stopping {
                condition.unlock()
                return
            }
            let batch = results
            results.removeAll()
            woken = false
            condition.unlock()
            for finished in batch { record(finished) }
            nextLook = look()
        }
    }

    /// Claims what is due and sends it; returns when to look again unless told sooner.
    private func look() -> Millis {
        let now = clock()
        do {
            if now >= nextMaintenance {
                try maintain()
                nextMaintenance = now + 1_000
            }
            let ids = configuration.endpoints.map(\.id)
            rotation = ids.isEmpty ? 0 : (rotation + 1) % ids.count
            for id in ids[rotation...] + ids[..<rotation] {
                let free = configuration.endpointConcurrency - inFlight[id, default: 0]
                guard free > 0, let endpoint = endpoints[id] else { continue }
                let claimed = try outbox.claim(endpoint: id, limit: free, now: now, owner: configuration.node,
                                               leaseMs: configuration.leaseMs, coalesceMs: configuration.coalesceMs)
                for delivery in claimed { send(delivery, to: endpoint) }
            }
            // Something due that could not be claimed waits for a free slot: a finished
            // attempt wakes this thread.
            let poll = now + configuration.pollMs
            guard let due = try outbox.nextDue(now: now), due > now else { return poll }
            return min(due, poll)
        } catch {
            complain("the webhook outbox could not be read", error)
            return now + configuration.pollMs
        }
    }

    /// Refreshes the outbox's counts and gives up on rows of endpoints no longer configured.
    private func maintain() throws {
        for id in try outbox.pendingEndpoints() where endpoints[id] == nil {
            for delivery in try outbox.claim(endpoint: id, limit: 100, now: clock(), owner: configuration.node,
                                             leaseMs: configuration.leaseMs, coalesceMs: 0) {
                try giveUp(delivery, status: nil, reason: "the endpoint `\(id)` is no longer configured")
            }
        }
        let counts = try outbox.counts()
        condition.lock()
        state.pending = counts.pending
        state.dead = counts.dead
        condition.unlock()
    }

    private func send(_ delivery: WebhookDelivery, to endpoint: WebhookEndpoint) {
        let body = JSONCodec.encode(delivery.payload)
        let timestamp = clock() / 1_000
        let signed = signers[endpoint.id]!.headers(id: delivery.event.id, timestamp: timestamp, body: body)
        let request = WebhookRequest(url: endpoint.url, headers: [("content-type", "application/json")] + signed, body: body,
                                     connectTimeoutMs: configuration.connectTimeoutMs, timeoutMs: configuration.timeoutMs,
                                     maxResponseBytes: configuration.maxResponseBytes)
        inFlight[endpoint.id, default: 0] += 1
        condition.lock()
        state.inFlight += 1
        condition.unlock()
        http.send(request) { [weak self] response in self?.finish(Finished(delivery: delivery, response: response)) }
    }

    /// On the HTTP thread: hands the outcome to the outbox thread.
    private func finish(_ finished: Finished) {
        condition.lock()
        results.append(finished)
        condition.broadcast()
        condition.unlock()
    }

    /// Writes an attempt's outcome to the outbox. When that fails the row keeps its lease,
    /// which runs out: the delivery is made again, with the same id.
    private func record(_ finished: Finished) {
        let delivery = finished.delivery
        let response = finished.response
        inFlight[delivery.endpoint, default: 1] -= 1
        let now = clock()
        condition.lock()
        state.inFlight -= 1
        state.attempts[response.label, default: 0] += 1
        condition.unlock()
        do {
            switch response.outcome {
            case .status(let status, _) where (200..<300).contains(status):
                try outbox.markDelivered(seq: delivery.seq)
                condition.lock()
                state.latency.observe(seconds: Double(max(now - delivery.event.createdAt, 0)) / 1_000)
                condition.unlock()
                logger.debug("webhook delivered", metadata: ["id": "\(delivery.event.id)", "endpoint": "\(delivery.endpoint)",
                                                             "attempt": "\(delivery.attempts)"])
            case .status(410, _):
                try giveUp(delivery, status: 410, reason: "the receiver answered 410 Gone")
            default:
                let (status, retryAfter, reason) = Self.describe(response)
                switch configuration.retry.next(afterAttempt: delivery.attempts, firstAttemptAt: delivery.firstAttemptAt ?? now,
                                                now: now, retryAfterMs: retryAfter, jitter: jitter()) {
                case .retry(let at):
                    try outbox.reschedule(seq: delivery.seq, owner: configuration.node, at: at, status: status, error: reason)
                    logger.info("webhook attempt failed; retrying", metadata: [
                        "id": "\(delivery.event.id)", "endpoint": "\(delivery.endpoint)", "attempt": "\(delivery.attempts)",
                        "reason": "\(reason)", "retryInMs": "\(at - now)",
                    ])
                case .giveUp:
                    try giveUp(delivery, status: status, reason: reason)
                }
            }
        } catch {
            complain("the outcome of a webhook attempt could not be recorded (it will be made again)", error)
        }
    }

    private func giveUp(_ delivery: WebhookDelivery, status: Int?, reason: String) throws {
        guard try outbox.deadLetter(seq: delivery.seq, owner: configuration.node, at: clock(), status: status, error: reason) else {
            return
        }
        condition.lock()
        state.deadLettered += 1
        condition.unlock()
        logger.warning("gave up on a webhook delivery; kept for inspection", metadata: [
            "id": "\(delivery.event.id)", "endpoint": "\(delivery.endpoint)", "attempts": "\(delivery.attempts)", "reason": "\(reason)",
        ])
    }

    /// The status, `Retry-After` and a line for the outbox's `last_error`.
    private static func describe(_ response: WebhookResponse) -> (Int?, Int64?, String) {
        switch response.outcome {
        case .status(let status, let retryAfter):
            let answer = String(decoding: response.body.prefix(200), as: UTF8.self)
            return (status, retryAfter, "HTTP \(status)" + (answer.isEmpty ? "" : ": \(answer)"))
        case .timedOut: return (nil, nil, "no answer in time")
        case .unreachable(let reason): return (nil, nil, "unreachable: \(reason)")
        case .tls(let reason): return (nil, nil, "TLS: \(reason)")
        case .failed(let reason): return (nil, nil, reason)
        }
    }

    /// Logs an outbox failure at most every few seconds (a database that is down fails every look).
    private func complain(_ what: String, _ error: any Error) {
        let now = clock()
        guard now - lastFailureLog >= 5_000 else { return }
        lastFailureLog = now
        logger.error("\(what)", metadata: ["error": "\(error)"])
    }
}
