// Threading model: the heartbeat runs on a thread of its own with a store connection of its
// own, so neither a slow group commit on the store thread nor a busy service thread can
// delay it past the lease. That connection holds the node's liveness lock; the thread waits on
// it between heartbeats, so its loss is seen at once. Node checks the hub asks for
// (`checkNow`) and the registration of a new identity (`rejoin`) run on the same thread. The
// listener has its own thread too (`ChangeListener`). Both only hand `ChangeNotice`s to
// `deliver` (and the heartbeat `Membership` changes to `membership`), which the runtime routes
// onto the service thread. `node`, `holdsLease` and the requests are shared under `condition`.
import Foundation
public import Logging
public import PanesCore

/// This process as a node of a cluster: its identity, the lease it keeps alive in the shared
/// store, and the listener that wakes it when other nodes write.
///
/// An identity lasts as long as its lease: once the lease has ended (another node found the
/// node gone and ended it, or it ran out), it is never renewed, and the node comes back under a
/// new identity (`rejoin`), as a restarted process would.
public final class ClusterNode: @unchecked Sendable {
    private let heartbeatStore: any SharedStore
    private let listener: any ChangeListener
    private let leaseMs: Int
    private let heartbeatMs: Int
    private let logger: Logger
    private let condition = NSCondition()
    private var stopping = false
    /// A node check was asked for (`checkNow`) and has not run yet; under `condition`.
    private var checkRequested = false
    /// A new identity was asked for (`rejoin`) and is not registered yet; under `condition`.
    private var rejoinRequested = false
    /// This node's identity now; under `condition`.
    private var current: NodeID
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the lease is held now; read by `/healthz` from the service thread.
    private var holdsLease = true
    /// The live nodes last reported; 0 before the first. The heartbeat thread's (and `start`'s,
    /// before that thread exists).
    private var reportedLiveNodes = 0
    /// The heartbeat thread's: a failing heartbeat is logged at most once every 5 s.
    private var logLimits = LogLimiter()

    /// A change of the node's membership, reported to the runtime (not the hub).
    public enum Membership: Sendable, Equatable {
        /// The lease of this identity has ended: its sessions may be taken over by other nodes
        /// at any moment. Reported once per identity, by whoever found out (a heartbeat, or the
        /// store thread through `NodeRevoked`, which reports it to the runtime itself).
        case revoked(NodeID)
        /// A new identity is registered, with the other nodes gone now (`nodesExpired`'s set).
        case joined(NodeID, gone: [NodeID])
        /// How many nodes' leases run now, this one's included, as of a heartbeat; reported
        /// when it changes (and after the first heartbeat).
        case liveNodes(Int)
    }

    /// - Parameters:
    ///   - heartbeatStore: a connection of the heartbeat's own (not the store thread's).
    ///   - leaseMs: how long a node counts as alive after its last heartbeat (`nodeLeaseMs`).
    ///   - heartbeatMs: how often it renews (`nodeHeartbeatMs`), well under the lease.
    public init(node: NodeID, heartbeatStore: any SharedStore, listener: any ChangeListener, leaseMs: Int,
                heartbeatMs: Int, logger: Logger) {
        self.current = node
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

    /// This node's identity now.
    public var node: NodeID {
        condition.lock()
        defer { condition.unlock() }
        return current
    }

    public var isHealthy: Bool {
        condition.lock()
        defer { condition.unlock() }
        return holdsLease
    }

    /// Registers the node before returning, so a node that cannot reach the store does not
    /// start serving (and the store thread's fence finds its row); then keeps renewing and
    /// listening until `stop()`.
    public func start(_ deliver: @escaping @Sendable (ChangeNotice) -> Void,
                      membership: @escaping @Sendable (Membership) -> Void) throws {
        let expired = try heartbeatStore.register(node: node, leaseMs: leaseMs)
        if !expired.isEmpty { deliver(.nodesExpired(expired)) }
        reportLiveNodes(membership)
        listener.start(deliver)
        let thread = Thread { [self] in beat(deliver, membership, reported: Set(expired)) }
        thread.name = "panes-heartbeat"
        self.thread = thread
        thread.start()
    }

    /// Asks which nodes are gone, now rather than at the next heartbeat; the answer is
    /// delivered as `.nodesChecked` (nil when the store could not be asked).
    public func checkNow() {
        request { $0.checkRequested = true }
    }

    /// The identity `old` has ended: registers a new one (`.joined`), unless that is under way
    /// or done already.
    public func rejoin(from old: NodeID) {
        request { node in
            if node.current == old { node.rejoinRequested = true }
        }
    }

    public func stop() {
        request { $0.stopping = true }
        if thread != nil { finished.wait() }
        listener.stop()
    }

    /// Sets a request under the lock and wakes the heartbeat's thread, in whatever way it waits.
    private func request(_ change: (ClusterNode) -> Void) {
        condition.lock()
        change(self)
        condition.signal()
        condition.unlock()
        heartbeatStore.interruptHeartbeatWait()
    }

    private enum Work { case stop, rejoin, check, beat, connectionLost }

    /// Waits for the next thing to do: a stop, a rejoin or a check asked for, the beat's time,
    /// or the heartbeat's connection found lost (watched where the store can: `beat` renews at
    /// once, since the liveness lock went with the connection).
    private func next(beatAt: Date, rejoinAt: Date?, watching: inout Bool) -> Work {
        while true {
            condition.lock()
            if stopping {
                condition.unlock()
                return .stop
            }
            if rejoinRequested, Date() >= rejoinAt ?? .distantPast {
                condition.unlock()
                return .rejoin
            }
            if checkRequested {
                checkRequested = false
                condition.unlock()
                return .check
            }
            // While a new identity is wanted, the old one is not renewed: only its registration is waited for.
            let until = rejoinRequested ? rejoinAt ?? Date() : beatAt
            let left = until.timeIntervalSinceNow
            if left <= 0 {
                condition.unlock()
                if rejoinRequested { continue }
                return .beat
            }
            guard watching else {
                _ = condition.wait(until: until)
                condition.unlock()
                continue
            }
            condition.unlock()
            switch heartbeatStore.awaitHeartbeatConnection(timeoutMs: Int((left * 1000).rounded(.up))) {
            case true?: return .connectionLost
            case false?: continue
            case nil: watching = false
            }
        }
    }

    /// Counts the live nodes and reports the count if it changed (`Membership.liveNodes`). A
    /// count that cannot be read is left for the next heartbeat.
    private func reportLiveNodes(_ membership: @Sendable (Membership) -> Void) {
        guard let count = try? heartbeatStore.liveNodeCount(), count != reportedLiveNodes else { return }
        reportedLiveNodes = count
        membership(.liveNodes(count))
    }

    private func beat(_ deliver: @escaping @Sendable (ChangeNotice) -> Void,
                      _ membership: @escaping @Sendable (Membership) -> Void, reported: Set<NodeID>) {
        var lastRenewed = Date()
        var nextBeat = Date(timeIntervalSinceNow: Double(heartbeatMs) / 1000)
        var reportedExpired = reported
        var watching = true
        /// The identity in use has ended: no heartbeat until a new one is registered.
        var ended = false
        var rejoinBackoff = Backoff.sharedStore
        var rejoinAt: Date?
        loop: while true {
            let work = next(beatAt: nextBeat, rejoinAt: rejoinAt, watching: &watching)
            let node = self.node
            switch work {
            case .stop:
                break loop
            case .rejoin:
                let fresh = ClusterNode.makeID()
                do {
                    let gone = try heartbeatStore.register(node: fresh, leaseMs: leaseMs)
                    condition.lock()
                    current = fresh
                    rejoinRequested = false
                    holdsLease = true
                    condition.unlock()
                    ended = false
                    rejoinAt = nil
                    rejoinBackoff.succeeded()
                    lastRenewed = Date()
                    nextBeat = Date(timeIntervalSinceNow: Double(heartbeatMs) / 1000)
                    reportedExpired = Set(gone)
                    logger.notice("rejoined the cluster as a new node", metadata: ["node": "\(fresh)", "was": "\(node)"])
                    membership(.joined(fresh, gone: gone))
                } catch {
                    rejoinAt = Date(timeIntervalSinceNow: Double(rejoinBackoff.failed()) / 1000)
                    logLimits.log(logger, .warning, "registering a new node identity failed", metadata: ["error": "\(error)"],
                                  now: Self.wallMs)
                }
            case .check:
                guard !ended else {
                    deliver(.nodesChecked(nil))
                    continue
                }
                do {
                    let others = Set(try heartbeatStore.checkNodes(node: node, leaseMs: leaseMs)).subtracting([node])
                    reportedExpired = others
                    deliver(.nodesChecked(others.sorted()))
                } catch {
                    logLimits.log(logger, .warning, "node check failed", metadata: ["error": "\(error)"], now: Self.wallMs)
                    deliver(.nodesChecked(nil))
                }
            case .beat, .connectionLost:
                nextBeat = Date(timeIntervalSinceNow: Double(heartbeatMs) / 1000)
                guard !ended else { continue }
                if work == .connectionLost {
                    // The liveness lock went with the connection: another node may find this one
                    // gone at its next check. Taken again now, with a renewal that also says
                    // whether that happened already.
                    logger.notice("the heartbeat's connection was lost; renewing on a new one at once")
                }
                do {
                    let expired = try heartbeatStore.heartbeat(node: node, leaseMs: leaseMs)
                    lastRenewed = Date()
                    setLease(true)
                    reportLiveNodes(membership)
                    // The whole set each time it changes.
                    let others = Set(expired).subtracting([node])
                    if others != reportedExpired { deliver(.nodesExpired(others.sorted())) }
                    reportedExpired = others
                } catch let revoked as NodeRevoked {
                    // Another node may hold some of this node's sessions now: it stops serving
                    // them (the runtime closes every scene) and comes back as a new node.
                    logger.error("this node's lease has ended; closing its scenes and rejoining as a new node",
                                 metadata: ["node": "\(revoked.node)"])
                    ended = true
                    setLease(false)
                    condition.lock()
                    if current == node { rejoinRequested = true }
                    condition.unlock()
                    membership(.revoked(node))
                } catch {
                    // The lease runs on the database's clock; stop serving a little before it can
                    // run out there, measured on ours from the last renewal that succeeded.
                    let silentMs = Int(Date().timeIntervalSince(lastRenewed) * 1000)
                    logLimits.log(logger, .warning, "heartbeat failed", metadata: ["error": "\(error)", "silentMs": "\(silentMs)"],
                                  now: Self.wallMs)
                    if silentMs + heartbeatMs >= leaseMs, isHealthy {
                        setLease(false)
                        deliver(.leaseLost)
                    }
                }
            }
        }
        finished.signal()
    }

    private static var wallMs: Millis { Millis(Date().timeIntervalSince1970 * 1000) }

    private func setLease(_ held: Bool) {
        condition.lock()
        holdsLease = held
        condition.unlock()
    }
}
