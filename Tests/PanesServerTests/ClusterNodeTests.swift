import Foundation
import Logging
import PanesCore
@testable import PanesServer
import Synchronization
import Testing

/// The node's lease, as `ClusterNode` keeps it: what it tells the hub when the database stops
/// answering.
@Suite struct ClusterNodeTests {
    /// Leases whose heartbeat, once `block` is set, hangs until released: a database behind a
    /// partition that drops packets, where the call returns only when libpq's own timeouts end it.
    final class HangingLeases: NodeLeases, @unchecked Sendable {
        let block = Mutex(false)
        let blockedNow = Mutex(false)
        let release = DispatchSemaphore(value: 0)

        func register(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] {
            guard block.withLock({ $0 }) else { return [] }
            blockedNow.withLock { $0 = true }
            release.wait()
            blockedNow.withLock { $0 = false }
            throw PanesError(.storageFailed, "the database went away")
        }
        func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func liveNodes() throws -> [NodeID] { [] }
    }

    /// Leases that renew at once and read two nodes alive, the same each time.
    final class SteadyLeases: NodeLeases, @unchecked Sendable {
        func register(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func liveNodes() throws -> [NodeID] { [NodeID("node_a"), NodeID("node_b")] }
    }

    /// The heartbeat tells the nodes alive every beat, not only when they change: a stale read
    /// of the listener's taken after one of the heartbeat's (it began later, but its snapshot
    /// was older) is replaced by the next beat's, not kept until membership next changes.
    @Test func theHeartbeatTellsTheNodesAliveEveryBeatEachReadBegunLater() throws {
        let node = ClusterNode(node: NodeID("node_a"), leases: SteadyLeases(), listener: QuietListener(),
                               leaseMs: 2_000, heartbeatMs: 200, logger: Logger(label: "test.cluster-node"))
        let reads = Mutex<[Millis]>([])
        let three = DispatchSemaphore(value: 0)
        try node.start({ notice in
            guard case .nodesAlive(let nodes, let readBegan) = notice, nodes == [NodeID("node_a"), NodeID("node_b")] else { return }
            if reads.withLock({ $0.append(readBegan); return $0.count }) == 3 { three.signal() }
        }, membership: { _ in })
        defer { node.stop() }
        #expect(three.wait(timeout: .now() + 20) == .success, "the same set, told three beats in a row")
        let began = reads.withLock { Array($0.prefix(3)) }
        #expect(began == began.sorted() && Set(began).count == 3, "\(began)")
    }

    final class QuietListener: ChangeListener {
        func start(_ deliver: @escaping @Sendable (ChangeNotice) -> Void) {}
        func stop() {}
    }

    /// Before, `.leaseLost` was told only when a heartbeat call failed, so a call hanging for
    /// libpq's `tcp_user_timeout` (5 s) kept the node serving its scenes after its lease (here
    /// 2 s) had run out in the database and another node could take them over.
    @Test func aHeartbeatHangingPastTheLeaseStillEndsItAndTheNodeIsToldOnce() throws {
        let leases = HangingLeases()
        let node = ClusterNode(node: NodeID("node_test"), leases: leases, listener: QuietListener(),
                               leaseMs: 2_000, heartbeatMs: 200, logger: Logger(label: "test.cluster-node"))
        let told = Mutex<[ChangeNotice]>([])
        let lost = DispatchSemaphore(value: 0)
        try node.start({ notice in
            told.withLock { $0.append(notice) }
            if notice == .leaseLost { lost.signal() }
        }, membership: { _ in })
        defer { node.stop() }
        #expect(node.isHealthy)

        leases.block.withLock { $0 = true }
        // A generous bound, not a timing assertion: without the watch it never comes while the
        // heartbeat hangs.
        #expect(lost.wait(timeout: .now() + 20) == .success, "the node is told its lease is lost")
        #expect(leases.blockedNow.withLock { $0 }, "told while the heartbeat is still hanging")
        #expect(!node.isHealthy)

        // The hanging call fails at last: the loss was told already, and is not told again.
        leases.block.withLock { $0 = false }
        leases.release.signal()
        while leases.blockedNow.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
        // Renewals succeed again and the lease is held once more.
        let deadline = Date().addingTimeInterval(20)
        while !node.isHealthy, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(node.isHealthy, "a renewal that succeeds again holds the lease")
        #expect(told.withLock { $0.filter { $0 == .leaseLost }.count } == 1)
    }
}

/// The node's own lease clock against the database's: the database counts a renewal's lease
/// from its transaction's start, so the node counts it from when it made the call, however
/// long the call took to come back.
@Suite struct ClusterNodeLeaseClockTests {
    /// A monotonic clock the test moves by hand (the shape of the hub tests' `TestClock`).
    final class ManualClock: Sendable {
        private let value = Mutex<Millis>(1_700_000_000_000)
        var now: Millis { value.withLock { $0 } }
        func advance(_ milliseconds: Millis) { value.withLock { $0 += milliseconds } }
    }

    /// Leases whose heartbeats answer at once until one is made slow: that one moves the clock
    /// on while it runs (the database took it at the start, the answer came `slowMs` later),
    /// and every heartbeat after it hangs until released, so the renewal it made is the last.
    final class SlowLeases: NodeLeases, @unchecked Sendable {
        let clock: ManualClock
        let slowMs = Mutex<Millis?>(nil)
        /// When the slow heartbeat was called, on `clock`.
        let slowSent = Mutex<Millis?>(nil)
        let hanging = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let released = Mutex(false)

        init(clock: ManualClock) { self.clock = clock }

        func register(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] {
            if slowSent.withLock({ $0 }) != nil {
                if released.withLock({ $0 }) { throw PanesError(.storageFailed, "the database went away") }
                hanging.signal()
                release.wait()
                throw PanesError(.storageFailed, "the database went away")
            }
            guard let slow = slowMs.withLock({ $0 }) else { return [] }
            slowSent.withLock { $0 = clock.now }
            clock.advance(slow)
            return []
        }
        func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func liveNodes() throws -> [NodeID] { [] }

        func stopHanging() {
            released.withLock { $0 = true }
            release.signal()
        }
    }

    /// What the node told the hub.
    final class Told: Sendable {
        let notices = Mutex<[ChangeNotice]>([])
        let lost = DispatchSemaphore(value: 0)
        var leaseLostCount: Int { notices.withLock { $0.filter { $0 == .leaseLost }.count } }
    }

    func startNode(_ leases: SlowLeases, _ told: Told) throws -> ClusterNode {
        let clock = leases.clock
        let node = ClusterNode(node: NodeID("node_clock"), leases: leases, listener: ClusterNodeTests.QuietListener(),
                               leaseMs: 2_000, heartbeatMs: 200, logger: Logger(label: "test.cluster-node"),
                               clock: { clock.now })
        try node.start({ notice in
            told.notices.withLock { $0.append(notice) }
            if notice == .leaseLost { told.lost.signal() }
        }, membership: { _ in })
        return node
    }

    /// Before, the deadline was the return time + the lease (less a heartbeat): a renewal that
    /// took 1.5 s kept the node serving 1.5 s past the lease the database had started, when
    /// another node may have taken its sessions over.
    @Test func aSlowRenewalCountsFromWhenItWasSentNotFromWhenItReturned() throws {
        let clock = ManualClock()
        let leases = SlowLeases(clock: clock)
        let told = Told()
        let started = clock.now
        let node = try startNode(leases, told)
        defer {
            leases.stopHanging()
            node.stop()
        }
        #expect(node.leaseDeadline == started + 1_800, "registered: the lease less a heartbeat from the call")

        // A renewal that takes longer than a heartbeat (several): the database started its lease
        // when it was sent.
        leases.slowMs.withLock { $0 = 1_500 }
        #expect(leases.hanging.wait(timeout: .now() + 20) == .success, "the slow renewal came back")
        let sent = try #require(leases.slowSent.withLock { $0 })
        #expect(node.leaseDeadline == sent + 1_800, "counted from the send, not from the return (\(sent + 1_500))")
        #expect(node.isHealthy, "renewed before its deadline")
        #expect(told.leaseLostCount == 0)

        // The next renewal hangs: at the deadline counted from the slow one's send, the node
        // stops serving, 1.5 s before a deadline counted from its return would have come.
        clock.advance(sent + 1_800 - clock.now)
        #expect(told.lost.wait(timeout: .now() + 20) == .success, "the node is told its lease is lost at send + lease")
        #expect(!node.isHealthy)
        #expect(told.leaseLostCount == 1)
    }

    /// Before, a renewal that came back after the deadline it set made the node serve again
    /// (`holdsLease`), although the database's lease from that renewal was about to run out.
    @Test func aRenewalThatReturnsPastItsOwnDeadlineDoesNotKeepTheNodeServing() throws {
        let clock = ManualClock()
        let leases = SlowLeases(clock: clock)
        let told = Told()
        let node = try startNode(leases, told)
        defer {
            leases.stopHanging()
            node.stop()
        }

        leases.slowMs.withLock { $0 = 2_500 }
        #expect(leases.hanging.wait(timeout: .now() + 20) == .success, "the slow renewal came back")
        let sent = try #require(leases.slowSent.withLock { $0 })
        #expect(node.leaseDeadline == sent + 1_800)
        #expect(clock.now >= node.leaseDeadline, "it came back past its own deadline")
        #expect(!node.isHealthy, "a renewal that came back too late does not hold the lease")
        #expect(told.lost.wait(timeout: .now() + 20) == .success, "the node is told its lease is lost")
        #expect(told.leaseLostCount == 1)
    }

    /// Heartbeats that fail while `failing`, then take each of `steps` in turn (moving the
    /// clock on while they run) and succeed; with none left, each waits for `gate`.
    final class RegainLeases: NodeLeases, @unchecked Sendable {
        let clock: ManualClock
        let failing = Mutex(true)
        let steps = Mutex<[Millis]>([])
        let stopped = Mutex(false)
        let waiting = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)

        init(clock: ManualClock) { self.clock = clock }

        func register(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] {
            while true {
                if failing.withLock({ $0 }) || stopped.withLock({ $0 }) { throw PanesError(.storageFailed, "the database went away") }
                if let took = steps.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                    clock.advance(took)
                    return []
                }
                waiting.signal()
                gate.wait()
            }
        }
        func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func liveNodes() throws -> [NodeID] { [] }
    }

    /// While the lease is not held the lease watch sleeps a whole heartbeat, and a regain does
    /// not wake it. Before, a renewal that came back just before its own deadline held the
    /// lease again: the watch, asleep, could tell the next loss up to a heartbeat after that
    /// deadline, when the database's lease may have run out. A lease not held is held again
    /// only by a renewal that came back at least a heartbeat before its deadline.
    @Test func aSlowRenewalDoesNotRegainALostLeaseAQuickOneDoes() throws {
        let clock = ManualClock()
        let leases = RegainLeases(clock: clock)
        let told = Told()
        let regained = Mutex(0)
        let node = ClusterNode(node: NodeID("node_regain"), leases: leases, listener: ClusterNodeTests.QuietListener(),
                               leaseMs: 2_000, heartbeatMs: 200, logger: Logger(label: "test.cluster-node"),
                               clock: { clock.now })
        try node.start({ notice in
            told.notices.withLock { $0.append(notice) }
            if notice == .leaseLost { told.lost.signal() }
        }, membership: { change in
            if case .leaseRegained = change { regained.withLock { $0 += 1 } }
        })
        defer {
            leases.stopped.withLock { $0 = true }
            leases.gate.signal()
            node.stop()
        }
        // The database stops answering; the lease is lost at its deadline.
        clock.advance(1_800)
        #expect(told.lost.wait(timeout: .now() + 20) == .success, "the node is told its lease is lost")

        // A renewal that comes back a millisecond before its own deadline (lease − heartbeat).
        leases.steps.withLock { $0 = [1_799] }
        leases.failing.withLock { $0 = false }
        #expect(leases.waiting.wait(timeout: .now() + 20) == .success, "the slow renewal came back")
        #expect(!node.isHealthy, "a renewal back less than a heartbeat before its deadline does not hold the lease again")
        #expect(regained.withLock { $0 } == 0)

        // One that comes back exactly a heartbeat before it does.
        leases.steps.withLock { $0 = [1_600] }
        leases.gate.signal()
        #expect(leases.waiting.wait(timeout: .now() + 20) == .success, "the quick renewal came back")
        #expect(node.isHealthy)
        #expect(regained.withLock { $0 } == 1)
        #expect(told.leaseLostCount == 1)
    }
}

/// A new identity's registration follows the heartbeat's rule: one that comes back past the
/// deadline it set does not hold the lease, until a renewal does.
@Suite struct ClusterNodeRegistrationClockTests {
    /// Leases whose registration after the first (a rejoin) takes `rejoinMs` (the lease, by
    /// default: longer than it allows; it moves the clock on while it runs), and whose
    /// heartbeats fail until `renews` is set.
    final class LateRegistrationLeases: NodeLeases, @unchecked Sendable {
        let clock: ClusterNodeLeaseClockTests.ManualClock
        let rejoinMs: Millis?
        let registrations = Mutex(0)
        let renews = Mutex(false)

        init(clock: ClusterNodeLeaseClockTests.ManualClock, rejoinMs: Millis? = nil) {
            self.clock = clock
            self.rejoinMs = rejoinMs
        }

        func register(node: NodeID, leaseMs: Int) throws -> [NodeID] {
            let count = registrations.withLock { $0 += 1; return $0 }
            if count > 1 { clock.advance(rejoinMs ?? Millis(leaseMs)) }
            return []
        }
        func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] {
            guard renews.withLock({ $0 }) else { throw PanesError(.storageFailed, "the database went away") }
            return []
        }
        func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func liveNodes() throws -> [NodeID] { [] }
    }

    /// Before, the rejoin's registration set the lease held whatever it took, and the node (and
    /// `/healthz`) served under it until the watch woke, up to a heartbeat later, or here, with
    /// a long lease, much later: the runtime reloading for the new identity took upgrades.
    @Test func aRegistrationThatReturnsPastItsOwnDeadlineDoesNotHoldTheLease() throws {
        try registrationDoesNotHoldTheLease(LateRegistrationLeases(clock: ClusterNodeLeaseClockTests.ManualClock()))
    }

    /// As a renewal while the lease is not held (`ClusterNodeLeaseClockTests`): a registration
    /// back less than a heartbeat before its deadline (lease − heartbeat) does not hold it.
    @Test func aRegistrationBackLessThanAHeartbeatBeforeItsDeadlineDoesNotHoldTheLease() throws {
        try registrationDoesNotHoldTheLease(LateRegistrationLeases(clock: ClusterNodeLeaseClockTests.ManualClock(),
                                                                   rejoinMs: 60_000 - 200 - 1))
    }

    func registrationDoesNotHoldTheLease(_ leases: LateRegistrationLeases) throws {
        let clock = leases.clock
        // A long lease: the watch sleeps until its deadline, far past this test.
        let node = ClusterNode(node: NodeID("node_old"), leases: leases, listener: ClusterNodeTests.QuietListener(),
                               leaseMs: 60_000, heartbeatMs: 200, logger: Logger(label: "test.cluster-node"),
                               clock: { clock.now })
        let joined = DispatchSemaphore(value: 0)
        let regained = DispatchSemaphore(value: 0)
        let healthyWhenJoined = Mutex<Bool?>(nil)
        try node.start({ _ in }, membership: { change in
            switch change {
            case .joined:
                healthyWhenJoined.withLock { $0 = node.isHealthy }
                joined.signal()
            case .leaseRegained:
                regained.signal()
            default:
                break
            }
        })
        defer { node.stop() }
        #expect(node.isHealthy)

        node.rejoin(from: NodeID("node_old"))
        #expect(joined.wait(timeout: .now() + 20) == .success, "registered anew")
        #expect(healthyWhenJoined.withLock { $0 } == false, "a registration that came back late does not hold the lease")
        #expect(!node.isHealthy)

        // A renewal in time holds it again, and says so.
        leases.renews.withLock { $0 = true }
        #expect(regained.wait(timeout: .now() + 20) == .success, "a renewal holds the lease again")
        #expect(node.isHealthy)
    }
}

/// What the heartbeat logs of ending lapsed nodes' leases (`logLeaseEndingNotes`): every node's
/// end is named, and a refusal that repeats at every check is limited per node, not per text.
@Suite struct ClusterNodeLeaseEndingNotesTests {
    /// Leases whose calls noted ending two lapsed nodes' connections, and being refused a third's
    /// and a fourth's (the notes a check of PostgreSQL's leaves; the same again each time taken).
    final class EndingLeases: NodeLeases, @unchecked Sendable {
        func register(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] { [] }
        func liveNodes() throws -> [NodeID] { [] }
        func takeLeaseEndingNotes() -> [LeaseEndingNote] {
            [.connectionsEnded(NodeID("node_b"), count: 2), .connectionsEnded(NodeID("node_c"), count: 1),
             .connectionsNotEnded(NodeID("node_d"), reason: "42501: refused"),
             .connectionsNotEnded(NodeID("node_e"), reason: "42501: refused"),
             .connectionsEndingFailed(NodeID("node_f"), error: "canceling statement due to statement timeout")]
        }
    }

    /// Keeps every line logged: its level and the lapsed node it names.
    struct Recorder: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
                 file: String, function: String, line: UInt) {
            let node = metadata?["lapsedNode"].map { "\($0)" } ?? ""
            lines.lines.withLock { $0.append((level, node)) }
        }
    }

    final class Lines: Sendable {
        let lines = Mutex<[(Logger.Level, String)]>([])
        func taken() -> [String] {
            lines.withLock { lines in
                defer { lines = [] }
                return lines.map { "\($0.0) \($0.1)" }
            }
        }
    }

    @Test func everyLapsedNodesEndIsLoggedAndARefusalOncePerNode() {
        let recorded = Lines()
        let logger = Logger(label: "test.cluster-node") { _ in Recorder(lines: recorded) }
        let node = ClusterNode(node: NodeID("node_a"), leases: EndingLeases(), listener: ClusterNodeTests.QuietListener(),
                               leaseMs: 2_000, heartbeatMs: 200, logger: logger)
        node.logLeaseEndingNotes()
        #expect(recorded.taken() == ["notice node_b", "notice node_c", "warning node_d", "warning node_e", "error node_f"])
        node.logLeaseEndingNotes()
        #expect(recorded.taken() == ["notice node_b", "notice node_c"],
                "each end again; the refusals and the failure at most once a minute")
    }
}
