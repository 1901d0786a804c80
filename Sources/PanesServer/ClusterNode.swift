// Threading model: the heartbeat runs on a thread of its own (a `ServiceThread`) with a store
// connection of its own, so neither a slow group commit on the store thread nor a busy service
// thread can delay it past the lease. That connection holds the node's liveness lock; the thread waits on
// it between heartbeats, so its loss is seen at once. Node checks the hub asks for
// (`checkNow`) and the registration of a new identity (`rejoin`) run on the same thread. The
// listener has its own thread too (`ChangeListener`). Both only hand `ChangeNotice`s to
// `deliver` (and the heartbeat `Membership` changes to `membership`), which the runtime routes
// onto the service thread. `node`, `holdsLease`, `renewedAt` and the requests are shared under
// the thread's lock; the heartbeat's own state (when to beat next, what it reported) is that
// thread's alone. A third thread, the lease watch, only reads `renewedAt` and ends
// `holdsLease` under that lock: a heartbeat blocked in a call to an unreachable database
// (a partition drops packets rather than refusing them) cannot tell the node its lease is gone
// until the call fails, seconds after other nodes may have taken its sessions over.
//
// The lease's clock: the database counts a renewal's lease from its transaction's start
// (`now()`), which comes after the node sent it but may come long before the call returns
// (a slow fsync, a reconnect); so the node counts it from the instant it made the call
// (`renewedAt`), never from the return, and its own deadline never outlives the database's.
import Foundation
public import Logging
public import PanesCore
import PanesThreads

/// This process as a node of a cluster: its identity, the lease it keeps alive in the shared
/// store, and the listener that wakes it when other nodes write.
///
/// An identity lasts as long as its lease: once the lease has ended (another node found the
/// node gone and ended it, or it ran out), it is never renewed, and the node comes back under a
/// new identity (`rejoin`), as a restarted process would.
public final class ClusterNode: @unchecked Sendable {
    let leases: any NodeLeases
    private let listener: any ChangeListener
    private let leaseMs: Int
    private let heartbeatMs: Int
    let logger: Logger
    /// The lease's clock: this process' monotonic clock, in milliseconds (injected by tests).
    private let clock: @Sendable () -> Millis
    /// The heartbeat's thread; a request wakes it wherever it waits, its connection too.
    private let thread: ServiceThread
    /// A node check was asked for (`checkNow`) and has not run yet; under the lock.
    private var checkRequested = false
    /// A new identity was asked for (`rejoin`) and is not registered yet; under the lock.
    private var rejoinRequested = false
    /// This node's identity now; under the lock.
    private var current: NodeID
    /// Whether the lease is held now; read by `/healthz` from the service thread.
    private var holdsLease = true
    /// When the call that last renewed (or registered) the lease was made, on `clock`: no
    /// later than the database's start of that lease. Under the lock.
    private var renewedAt: Millis
    /// Tells the node its lease is lost once `renewedAt` is too old, whatever the heartbeat
    /// thread is blocked in (`watchLease`).
    private let leaseWatch = ServiceThread(name: "panes-lease-watch")
    /// The live nodes last reported (their count to `membership`, the set to `deliver`); empty
    /// nil before the first. The heartbeat thread's (and `start`'s, before that thread exists).
    private var reportedLiveNodes: [NodeID]?
    /// The heartbeat thread's: a failing heartbeat is logged at most once every 5 s, what ending
    /// a lapsed node's lease could not do once a minute per node (`logLeaseEndingNotes`).
    private var logLimits = LogLimiter()
    var leaseEndingLogLimits = LogLimiter(intervalMs: 60_000)
    /// The heartbeat thread's own state.
    private var beat = Beat()

    /// What the heartbeat thread keeps between turns.
    private struct Beat {
        var next = MonotonicInstant.distantPast
        /// The other nodes gone, as last delivered.
        var reportedExpired: Set<NodeID> = []
        /// The heartbeat's connection can be waited on (`awaitHeartbeatConnection`).
        var watching = true
        /// The identity in use has ended: no heartbeat until a new one is registered.
        var ended = false
        var rejoinBackoff = Backoff.sharedStore
        var rejoinAt: MonotonicInstant?
    }

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
        /// A renewal held the lease again after the node had told the hub it was lost
        /// (`ChangeNotice.leaseLost`): the database had not ended it meanwhile.
        case leaseRegained
    }

    /// - Parameters:
    ///   - leases: a lease-only handle on a connection of the heartbeat's own (not the store
    ///     thread's): `PostgresLeases`.
    ///   - leaseMs: how long a node counts as alive after its last heartbeat (`nodeLeaseMs`).
    ///   - heartbeatMs: how often it renews (`nodeHeartbeatMs`), well under the lease.
    ///   - clock: the monotonic clock the lease is counted on, in milliseconds (this process'
    ///     by default; tests pass one they move by hand).
    public init(node: NodeID, leases: any NodeLeases, listener: any ChangeListener, leaseMs: Int,
                heartbeatMs: Int, logger: Logger, clock: (@Sendable () -> Millis)? = nil) {
        self.current = node
        self.leases = leases
        self.listener = listener
        self.leaseMs = leaseMs
        self.heartbeatMs = heartbeatMs
        self.logger = logger
        let clock = clock ?? { MonotonicInstant.now().milliseconds }
        self.clock = clock
        self.renewedAt = clock()
        // `interruptHeartbeatWait` is the one call the store allows from another thread.
        nonisolated(unsafe) let handle = leases
        thread = ServiceThread(name: "panes-heartbeat", interrupt: { handle.interruptHeartbeatWait() })
    }

    /// A fresh node identity: a restarted process never inherits the claims of its past self.
    public static func makeID() -> NodeID {
        NodeID("node_" + String(UInt64.random(in: 0...UInt64.max), radix: 36))
    }

    /// This node's identity now.
    public var node: NodeID { thread.withLock { current } }

    public var isHealthy: Bool { thread.withLock { holdsLease } }

    /// When the lease counts as lost unless renewed before (on `clock`): the last renewal's
    /// call time plus the lease, less a heartbeat.
    var leaseDeadline: Millis { thread.withLock { renewalDue(after: renewedAt) } }

    /// Registers the node before returning, so a node that cannot reach the store does not
    /// start serving (and the store thread's fence finds its row); then keeps renewing and
    /// listening until `stop()`.
    public func start(_ deliver: @escaping @Sendable (ChangeNotice) -> Void,
                      membership: @escaping @Sendable (Membership) -> Void) throws {
        let sent = clock()
        let expired = try leases.register(node: node, leaseMs: leaseMs)
        logLeaseEndingNotes()
        thread.withLock { renewedAt = sent }
        if !expired.isEmpty { deliver(.nodesExpired(expired)) }
        reportLiveNodes(deliver, membership)
        listener.start(deliver)
        beat.reportedExpired = Set(expired)
        beat.next = .after(milliseconds: heartbeatMs)
        thread.start { [self] in run(deliver, membership) }
        leaseWatch.start { [self] in watchLease(deliver) }
    }

    /// Asks which nodes are gone, now rather than at the next heartbeat; the answer is
    /// delivered as `.nodesChecked` (nil when the store could not be asked).
    public func checkNow() {
        thread.wake { checkRequested = true }
    }

    /// The identity `old` has ended: registers a new one (`.joined`), unless that is under way
    /// or done already.
    public func rejoin(from old: NodeID) {
        thread.wake {
            if current == old { rejoinRequested = true }
        }
    }

    /// Stops the heartbeat (its thread returns), then the listener.
    public func stop() {
        leaseWatch.stop()
        thread.stop()
        listener.stop()
    }

    private enum Work { case stop, rejoin, check, beat, connectionLost }

    private func run(_ deliver: @escaping @Sendable (ChangeNotice) -> Void,
                     _ membership: @escaping @Sendable (Membership) -> Void) {
        while true {
            let work = next()
            let node = self.node
            switch work {
            case .stop:
                return
            case .rejoin:
                register(replacing: node, membership)
            case .check:
                check(node, deliver)
            case .beat, .connectionLost:
                beat.next = .after(milliseconds: heartbeatMs)
                guard !beat.ended else { continue }
                if work == .connectionLost {
                    // The liveness lock went with the connection: another node may find this one
                    // gone at its next check. Taken again now, with a renewal that also says
                    // whether that happened already.
                    logger.notice("the heartbeat's connection was lost; renewing on a new one at once")
                }
                renew(node, deliver, membership)
            }
        }
    }

    /// Waits for the next thing to do: a stop, a rejoin or a check asked for, the beat's time,
    /// or the heartbeat's connection found lost (watched where the store can: `beat` renews at
    /// once, since the liveness lock went with the connection).
    private func next() -> Work {
        while true {
            let (work, until): (Work?, MonotonicInstant) = thread.withLock {
                if thread.stopRequested { return (.stop, .now()) }
                if rejoinRequested, MonotonicInstant.now() >= beat.rejoinAt ?? .distantPast { return (.rejoin, .now()) }
                if checkRequested {
                    checkRequested = false
                    return (.check, .now())
                }
                // While a new identity is wanted, the old one is not renewed: only its registration is waited for.
                let until = rejoinRequested ? beat.rejoinAt ?? .now() : beat.next
                if until <= .now() { return (rejoinRequested ? nil : .beat, until) }
                guard beat.watching else {
                    thread.wait(until: until)
                    return (nil, until)
                }
                return (nil, until)
            }
            if let work { return work }
            let now = MonotonicInstant.now()
            guard beat.watching, until > now else { continue }
            let leftMs = Int((until.nanoseconds - now.nanoseconds + 999_999) / 1_000_000)
            switch leases.awaitHeartbeatConnection(timeoutMs: leftMs) {
            case true?: return .connectionLost
            case false?: continue
            case nil: beat.watching = false
            }
        }
    }

    /// Registers a new identity in place of `old` (whose lease ended), retried with backoff.
    private func register(replacing old: NodeID, _ membership: @Sendable (Membership) -> Void) {
        let fresh = ClusterNode.makeID()
        do {
            let sent = clock()
            let gone = try leases.register(node: fresh, leaseMs: leaseMs)
            logLeaseEndingNotes()
            thread.withLock {
                current = fresh
                rejoinRequested = false
                renewedAt = sent
                // Serving under the new identity from now on, unless the registration came back
                // less than a heartbeat before the deadline it set: then, as for a slow renewal
                // while the lease is not held (`renew`, `regains`), the lease is not held until a
                // renewal holds it (`leaseRegained`), and the runtime, reloading for the new
                // identity, refuses connections meanwhile (`reloaded`).
                holdsLease = regains(late: clock() - renewalDue(after: sent))
            }
            beat.ended = false
            beat.rejoinAt = nil
            beat.rejoinBackoff.succeeded()
            beat.next = .after(milliseconds: heartbeatMs)
            beat.reportedExpired = Set(gone)
            logger.notice("rejoined the cluster as a new node", metadata: ["node": "\(fresh)", "was": "\(old)"])
            membership(.joined(fresh, gone: gone))
        } catch {
            beat.rejoinAt = .after(milliseconds: Int(beat.rejoinBackoff.failed()))
            logLimits.log(logger, .warning, "registering a new node identity failed", metadata: ["error": "\(error)"],
                          now: Self.nowMs)
        }
    }

    /// Asks which other nodes are gone and delivers the whole set (nil when it cannot tell).
    private func check(_ node: NodeID, _ deliver: @Sendable (ChangeNotice) -> Void) {
        guard !beat.ended else {
            deliver(.nodesChecked(nil))
            return
        }
        do {
            let others = Set(try leases.checkNodes(node: node, leaseMs: leaseMs)).subtracting([node])
            logLeaseEndingNotes()
            beat.reportedExpired = others
            deliver(.nodesChecked(others.sorted()))
        } catch {
            logLimits.log(logger, .warning, "node check failed", metadata: ["error": "\(error)"], now: Self.nowMs)
            deliver(.nodesChecked(nil))
        }
    }

    /// Renews the lease; an ended lease starts a rejoin, and a store out of reach for too long
    /// tells the node to stop serving (`leaseLost`).
    private func renew(_ node: NodeID, _ deliver: @Sendable (ChangeNotice) -> Void,
                       _ membership: @Sendable (Membership) -> Void) {
        do {
            // Taken before the call: the database starts the lease when the call's transaction
            // starts, later than this, and the call may return long after that.
            let sent = clock()
            let expired = try leases.heartbeat(node: node, leaseMs: leaseMs)
            logLeaseEndingNotes()
            let (lateBy, regained) = thread.withLock {
                renewedAt = sent
                // A renewal that returns after the deadline it set does not keep the node
                // serving (`loseLeaseIfSilent` below tells the loss), and one that returns less
                // than a heartbeat before it does not make the node serve again (`regains`).
                let late = clock() - renewalDue(after: sent)
                let regained = !holdsLease && regains(late: late)
                if regained { holdsLease = true }
                return (late, regained)
            }
            if regained { membership(.leaseRegained) }
            if lateBy >= 0 {
                logLimits.log(logger, .warning, "a heartbeat returned after the lease it renewed had to be renewed again",
                              metadata: ["lateByMs": "\(lateBy)"], now: Self.nowMs)
                if loseLeaseIfSilent() { deliver(.leaseLost) }
            }
            reportLiveNodes(deliver, membership)
            // The whole set each time it changes.
            let others = Set(expired).subtracting([node])
            if others != beat.reportedExpired { deliver(.nodesExpired(others.sorted())) }
            beat.reportedExpired = others
        } catch let revoked as NodeRevoked {
            // Another node may hold some of this node's sessions now: it stops serving them
            // (the runtime closes every scene) and comes back as a new node.
            logger.error("this node's lease has ended; closing its scenes and rejoining as a new node",
                         metadata: ["node": "\(revoked.node)"])
            beat.ended = true
            thread.withLock {
                holdsLease = false
                if current == node { rejoinRequested = true }
            }
            membership(.revoked(node))
        } catch {
            // The lease runs on the database's clock; stop serving a little before it can run
            // out there, measured on ours (monotonic) from when the last renewal that succeeded
            // was sent.
            let silentMs = clock() - thread.withLock { renewedAt }
            logLimits.log(logger, .warning, "heartbeat failed", metadata: ["error": "\(error)", "silentMs": "\(silentMs)"],
                          now: Self.nowMs)
            if loseLeaseIfSilent() { deliver(.leaseLost) }
        }
    }

    /// Reads the live nodes and tells the hub (`nodesAlive`: it learns of a node it has not
    /// heard from, say one whose `scenesWanted` arrived while the runtime was rejoining), every
    /// beat, changed or not: a read of the listener's that overlapped this one and began after
    /// it is taken after it, and may have missed a node registered meanwhile; the next beat's
    /// read, begun later, puts that node back within a heartbeat. Tells the runtime their
    /// count, if that changed (`Membership.liveNodes`). A set that cannot be read is left for
    /// the next heartbeat.
    private func reportLiveNodes(_ deliver: @Sendable (ChangeNotice) -> Void,
                                 _ membership: @Sendable (Membership) -> Void) {
        // Stamped before the query, on the clock the listener's reads are stamped on.
        let readBegan = Self.nowMs
        guard let nodes = try? leases.liveNodes() else { return }
        deliver(.nodesAlive(nodes, readBegan: readBegan))
        let count = max(1, nodes.count)
        let countChanged = reportedLiveNodes.map { max(1, $0.count) != count } ?? true
        reportedLiveNodes = nodes
        if countChanged { membership(.liveNodes(count)) }
    }

    /// Milliseconds on the monotonic clock, for the log limiter's intervals.
    private static var nowMs: Millis { MonotonicInstant.now().milliseconds }

    /// Ends `holdsLease` if the lease has gone unrenewed for `leaseMs − heartbeatMs` since the
    /// last renewal was sent (the lease runs on the database's clock: stop serving a little
    /// before it can run out there), once: whichever of the heartbeat and the watch finds it
    /// first reports `.leaseLost`.
    private func loseLeaseIfSilent() -> Bool {
        thread.withLock {
            guard holdsLease, clock() >= renewalDue(after: renewedAt) else { return false }
            holdsLease = false
            return true
        }
    }

    /// Whether a renewal (or registration) that came back `late` ms past its own deadline
    /// (`renewalDue`; negative: before it) holds a lease that was not held: only if it came back
    /// at least a heartbeat before that deadline. While the lease is not held, the lease watch
    /// sleeps a whole heartbeat and is not woken on a regain, so it wakes by then and is in time
    /// for the next loss; a slower one (the usual case after a slow database) left it asleep
    /// past that loss, up to a heartbeat into the database's lease.
    private func regains(late: Millis) -> Bool {
        late <= -Millis(heartbeatMs)
    }

    /// When a lease renewed by a call made at `sent` counts as lost unless renewed again.
    private func renewalDue(after sent: Millis) -> Millis {
        sent + Millis(leaseMs - heartbeatMs)
    }

    /// The lease watch's loop: wakes when the lease would have to be renewed by, and reports
    /// `.leaseLost` if it was not, so a heartbeat blocked in a call (up to libpq's
    /// `tcp_user_timeout` and `connect_timeout`, which do not follow `nodeLeaseMs`) does not
    /// leave the node serving sessions another node may own by now. While the lease is not
    /// held it looks again every heartbeat.
    private func watchLease(_ deliver: @Sendable (ChangeNotice) -> Void) {
        while true {
            let (held, leftMs) = thread.withLock { (holdsLease, renewalDue(after: renewedAt) - clock()) }
            // Waited for on the threads' own clock, for as long as `clock` says is left.
            let due = MonotonicInstant.after(milliseconds: held ? Int(max(0, leftMs)) : heartbeatMs)
            guard leaseWatch.pause(until: due) else { return }
            guard held, loseLeaseIfSilent() else { continue }
            logger.error("the lease was not renewed in time (the database is out of reach); closing this node's scenes",
                         metadata: ["leaseMs": "\(leaseMs)"])
            deliver(.leaseLost)
        }
    }
}
