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
