// Threading: the listener owns one thread (a `ServiceThread`, "panes-listen") and one
// connection, used only there. `start` and `stop` are called from elsewhere (the runtime);
// `currentBackend` is shared under `lock`. `deliver` runs on the listener's thread.
import Foundation
public import PanesCore
import PanesJSON
import PanesThreads

/// Turns `NOTIFY panes` into `ChangeNotice`s: `LISTEN panes` on a connection of its own, a
/// thread that waits on its socket (`poll`, woken every `pollIntervalMs` to notice `stop`;
/// a pause between reconnections ends at once), and on a lost connection reconnects with backoff, listens again, and delivers
/// the nodes alive then (`.nodesAlive`, read once listening) and `.resubscribed` so the node looks at everything it may have missed meanwhile. It delivers
/// `.resubscribed` after its first `LISTEN` too, covering what was written between the node
/// loading its state and the listener starting.
///
/// Given its node's store's `noticeOrigin`, it drops the payloads that store sent (PostgreSQL
/// delivers a NOTIFY to the sender's LISTEN too) by their first bytes, before decoding them:
/// the node wrote those changes itself and needs no hint of them (`ChangeNoticePayload`). In a
/// failover storm the surviving node's own claims were most of what it decoded.
public final class PostgresListener: ChangeListener, @unchecked Sendable {
    public let url: String
    /// How long one wait on the socket lasts: the longest `stop` waits for the thread.
    public let pollIntervalMs: Int32
    /// The first pause before reconnecting, doubled after each failure up to `maxBackoffMs`.
    public let minBackoffMs: Int
    public let maxBackoffMs: Int
    private let lock = NSLock()
    private let thread = ServiceThread(name: "panes-listen")
    /// The backend serving the current LISTEN connection (tests terminate it); 0 when none.
    private var currentBackend: Int32 = 0
    /// What every payload of the node's own store starts with (`ChangeNoticePayload.originPrefix`),
    /// NUL-free; nil when none is skipped.
    private let ownPrefix: [CChar]?
    private var counted = Counts()

    /// Payloads received since the start, under `lock` (read by tests).
    struct Counts: Sendable, Equatable {
        /// Decoded and delivered.
        var read = 0
        /// Sent by the node's own store: dropped unread.
        var own = 0
    }

    /// - Parameter ownOrigin: the `noticeOrigin` of the node's own `PostgresStore`, whose
    ///   payloads are dropped unread; nil delivers every payload.
    public init(url: String, ownOrigin: String? = nil, pollIntervalMs: Int32 = 100, minBackoffMs: Int = 50,
                maxBackoffMs: Int = 2_000) throws {
        self.url = try PostgresSettings.split(url).url
        ownPrefix = ownOrigin.map { ChangeNoticePayload.originPrefix($0).utf8.map { CChar(bitPattern: $0) } }
        self.pollIntervalMs = pollIntervalMs
        self.minBackoffMs = minBackoffMs
        self.maxBackoffMs = maxBackoffMs
    }

    /// The server process of the LISTEN connection; 0 while not connected.
    public var backendPID: Int32 {
        lock.lock()
        defer { lock.unlock() }
        return currentBackend
    }

    /// The payloads received so far.
    var counts: Counts {
        lock.lock()
        defer { lock.unlock() }
        return counted
    }

    public func start(_ deliver: @escaping @Sendable (ChangeNotice) -> Void) {
        thread.start { [self] in run(deliver) }
    }

    /// Ends the thread: within `pollIntervalMs` while it listens, at once while it waits to reconnect.
    public func stop() {
        thread.stop()
    }

    private var isStopping: Bool { thread.isStopping }

    private func run(_ deliver: @Sendable (ChangeNotice) -> Void) {
        var backoff = Backoff(minMs: Millis(minBackoffMs), maxMs: Millis(maxBackoffMs))
        while !isStopping {
            let connection: PostgresConnection
            let alive: [NodeID]
            var readBegan: Millis = 0
            do {
                connection = try PostgresConnection(url: url)
                try connection.execute("LISTEN panes")
                // Read once listening: a node registered after this read sends `scenesWanted`
                // after its registration, which this connection hears; one registered before
                // is in the read. So the node knows every other node alive (`nodesAlive`).
                // Stamped before the query, on the clock the heartbeat's reads are stamped on.
                readBegan = MonotonicInstant.now().milliseconds
                alive = try PostgresStore.liveNodes(on: connection)
                // Again, a no-op, so that the statement `pg_stat_activity` shows for this
                // connection is still `LISTEN`: that is how an operator (and the fault tests,
                // which terminate it) tells the listener's connection from the others.
                try connection.execute("LISTEN panes")
            } catch {
                _ = thread.pause(until: .after(milliseconds: Int(backoff.failed())))
                continue
            }
            backoff.succeeded()
            lock.lock()
            currentBackend = connection.backendPID
            lock.unlock()
            // Every (re)connection says so, the first too: the node loaded its state before the
            // listener started, and what other nodes wrote in between was never notified to it.
            deliver(.nodesAlive(alive, readBegan: readBegan))
            deliver(.resubscribed)
            listen(on: connection, deliver)
            lock.lock()
            currentBackend = 0
            lock.unlock()
            connection.close()
        }
    }

    /// Delivers notifications until the connection fails or `stop` is called.
    private func listen(on connection: PostgresConnection, _ deliver: @Sendable (ChangeNotice) -> Void) {
        while !isStopping {
            var descriptor = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, pollIntervalMs)
            if ready < 0 && errno != EINTR { return }
            guard ready > 0 else { continue }
            do {
                // Until none are queued: reading a large signal's payload is a query, and the
                // notifications the server sends before that query's end are queued by libpq
                // with its answer, leaving nothing on the socket to wake `poll` — one would
                // wait for the next notification to come (20 s and more, seen in the fan-out
                // bench right after 10,000 connects).
                var received = try receive(on: connection)
                while !received.isEmpty {
                    try handle(received, on: connection, deliver)
                    received = try receive(on: connection)
                }
            } catch {
                return
            }
        }
    }

    /// The notifications that arrived, without the node's own, counted.
    private func receive(on connection: PostgresConnection) throws -> [(channel: String, payload: String)] {
        var own = 0
        let isOwn = ownPrefix.map { prefix in { (payload: UnsafePointer<CChar>) in ChangeNoticePayload.hasOrigin(payload, prefix: prefix) } }
        let received = try connection.receiveNotifications(skipping: isOwn, skipped: &own)
        if own > 0 || !received.isEmpty {
            lock.lock()
            counted.own += own
            counted.read += received.count
            lock.unlock()
        }
        return received
    }

    /// Delivers one batch of notifications, fetching the payloads of stored signals.
    private func handle(_ notifications: [(channel: String, payload: String)], on connection: PostgresConnection,
                        _ deliver: @Sendable (ChangeNotice) -> Void) throws {
        for notification in notifications where notification.channel == "panes" {
            for item in ChangeNoticePayload.decodeItems(notification.payload) {
                switch item {
                case .notice(let notice):
                    deliver(notice)
                case .storedSignal(let id):
                    // Gone only if pruned (read later than `signalRetentionMs`): a notification
                    // lost, so the node looks at everything again, as after any loss (an answer's
                    // middle part skipped without a word read as a whole answer, and dropped the
                    // cursors it held). Unreadable, as an inline signal that is.
                    let text = try connection.query("SELECT payload FROM node_signals WHERE id = $1", [.int(id)])
                    guard text.count > 0, case .success(let json) = JSONCodec.decode(text.text(0, 0) ?? ""),
                          let signal = NodeSignal(json: json) else {
                        deliver(.resubscribed)
                        continue
                    }
                    deliver(.signal(signal))
                }
            }
        }
    }
}
