// Threading model: the heartbeat runs on a thread of its own with a store connection of its
// own, so neither a slow group commit on the store thread nor a busy service thread can
// delay it past the lease. That connection holds the node's liveness lock, and node checks
// the hub asks for (`checkNow`) run on the same thread between heartbeats. The listener has its own thread too (`ChangeListener`). Both
// only hand `ChangeNotice`s to `deliver`, which the runtime routes onto the service thread.
import Foundation
public import Logging
public import PanesCore

/// This process as a node of a cluster: its identity, the lease it keeps alive in the shared
/// store, and the listener that wakes it when other nodes write.
public final class ClusterNode: @unchecked Sendable {
    public let node: NodeID
    private let heartbeatStore: any SharedStore
    private let listener: any ChangeListener
    private let leaseMs: Int
    private let heartbeatMs: Int
    private let logger: Logger
    private let condition = NSCondition()
    private var stopping = false
    /// A node check was asked for (`checkNow`) and has not run yet; under `condition`.
    private var checkRequested = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the lease is held now; read by `/healthz` from the service thread.
    private var holdsLease = true
    /// The heartbeat thread's: a failing heartbeat is logged at most once every 5 s.
    private var logLimits = LogLimiter()

    /// - Parameters:
    ///   - heartbeatStore: a connection of the heartbeat's own (not the store thread's).
    ///   - leaseMs: how long a node counts as alive after its last heartbeat (`nodeLeaseMs`).
    ///   - heartbeatMs: how often it renews (`nodeHeartbeatMs`), well under the lease.
    public init(node: NodeID, heartbeatStore: any SharedStore, listener: any ChangeListener, leaseMs: Int,
                heartbeatMs: Int, logger: Logger) {
        self.node = node
        self.heartbeatStore = heartbeatStore
        self.listener = listener
        self.leaseMs = leaseMs
        self.heartbeatMs = heartbeatMs
        self.logger = logger
    }

    /// A fresh node identity: a restarted process never inherits the claims of its past self.
    public static func makeID() -> NodeID {
        NodeID("node_" + String(UInt64.random(in: 0...UInt64.max), radix: 36))
    }

    public var isHealthy: Bool {
        condition.lock()
        defer { condition.unlock() }
        return holdsLease
    }

    /// Renews the lease once before returning, so a node that cannot reach the store does not
    /// start serving; then keeps renewing and listening until `stop()`.
    public func start(_ deliver: @escaping @Sendable (ChangeNotice) -> Void) throws {
        let expired = try heartbeatStore.heartbeat(node: node, leaseMs: leaseMs).filter { $0 != node }
        if !expired.isEmpty { deliver(.nodesExpired(expired)) }
        listener.start(deliver)
        let thread = Thread { [self] in beat(deliver) }
        thread.name = "panes-heartbeat"
        self.thread = thread
        thread.start()
    }

    /// Asks which nodes are gone, now rather than at the next heartbeat; the answer is
    /// delivered as `.nodesChecked` (nil when the store could not be asked).
    public func checkNow() {
        condition.lock()
        checkRequested = true
        condition.signal()
        condition.unlock()
    }

    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        if thread != nil { finished.wait() }
        listener.stop()
    }

    private func beat(_ deliver: @escaping @Sendable (ChangeNotice) -> Void) {
        var lastRenewed = Date()
        var nextBeat = Date(timeIntervalSinceNow: Double(heartbeatMs) / 1000)
        var reportedExpired: Set<NodeID> = []
        while true {
            condition.lock()
            while !stopping && !checkRequested && Date() < nextBeat { _ = condition.wait(until: nextBeat) }
            let done = stopping
            let check = checkRequested
            checkRequested = false
            condition.unlock()
            if done { break }
            if check {
                do {
                    let others = Set(try heartbeatStore.checkNodes(node: node, leaseMs: leaseMs)).subtracting([node])
                    reportedExpired = others
                    deliver(.nodesChecked(others.sorted { $0.rawValue < $1.rawValue }))
                } catch {
                    logLimits.log(logger, .warning, "node check failed", metadata: ["error": "\(error)"],
                                  now: Millis(Date().timeIntervalSince1970 * 1000))
                    deliver(.nodesChecked(nil))
                }
                continue
            }
            nextBeat = Date(timeIntervalSinceNow: Double(heartbeatMs) / 1000)
            do {
                let expired = try heartbeatStore.heartbeat(node: node, leaseMs: leaseMs)
                lastRenewed = Date()
                if expired.contains(node) {
                    // Renewed, but too late: another node may hold some of our sessions now.
                    logger.error("this node's lease ran out before it was renewed; closing its scenes")
                    deliver(.leaseLost)
                }
                setLease(true)
                // The whole set each time it changes: a node can come back (it was only slow).
                let others = Set(expired).subtracting([node])
                if others != reportedExpired { deliver(.nodesExpired(others.sorted())) }
                reportedExpired = others
            } catch {
                // The lease runs on the database's clock; stop serving a little before it can
                // run out there, measured on ours from the last renewal that succeeded.
                let silentMs = Int(Date().timeIntervalSince(lastRenewed) * 1000)
                logLimits.log(logger, .warning, "heartbeat failed", metadata: ["error": "\(error)", "silentMs": "\(silentMs)"],
                              now: Millis(Date().timeIntervalSince1970 * 1000))
                if silentMs + heartbeatMs >= leaseMs, isHealthy {
                    setLease(false)
                    deliver(.leaseLost)
                }
            }
        }
        finished.signal()
    }

    private func setLease(_ held: Bool) {
        condition.lock()
        holdsLease = held
        condition.unlock()
    }
}
