import Foundation
import PanesCore
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

/// The heartbeat's lease-only handle: it keeps a node's lease on a connection of its own, and
/// it does not migrate (the node's store does).
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresLeasesTests {
    @Test func aLeaseOnlyHandleKeepsANodeAliveAndItsEndIsSeenByTheOthers() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let leases = try PostgresLeases(url: database.url)
        let (node, other) = (NodeID("node-a"), NodeID("node-b"))
        #expect(try leases.register(node: node, leaseMs: 60_000) == [])
        #expect(try leases.heartbeat(node: node, leaseMs: 60_000) == [])
        _ = try store.register(node: other, leaseMs: 60_000)
        #expect(try store.checkNodes(node: other, leaseMs: 60_000) == [], "the handle holds the node's liveness lock")
        leases.close()
        var gone: [NodeID] = []
        for _ in 0..<50 where gone.isEmpty {
            gone = try store.checkNodes(node: other, leaseMs: 60_000)
            if gone.isEmpty { Thread.sleep(forTimeInterval: 0.02) }
        }
        #expect(gone == [node], "its connection ended, and its lock with it")
    }

    /// The heartbeat logs what its checks did to end a lapsed node's lease from this handle's
    /// notes (`ClusterNode.logLeaseEndingNotes`): they are its store's, handed on.
    @Test func aLeaseOnlyHandleHandsOnWhatEndingALapsedLeaseTook() throws {
        let database = try TestDatabase()
        _ = try PostgresStore(url: database.url)
        let (a, b) = (try PostgresLeases(url: database.url), try PostgresLeases(url: database.url))
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        _ = try a.register(node: nodeA, leaseMs: 1_000)
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        let (_, running) = try PostgresLapsedNodesTests.holdRow(of: nodeA, database)
        #expect(try PostgresLapsedNodesTests.checkUntil(b, asking: nodeB, gone: [nodeA]) == [nodeA])
        #expect(b.takeLeaseEndingNotes() == [.connectionsEnded(nodeA, count: 2)], "a's heartbeat's and the holder's")
        #expect(running.ended(within: 10) != nil)
        withExtendedLifetime(a) {}
    }

    @Test func aLeaseOnlyHandleDoesNotMigrate() throws {
        let database = try TestDatabase()
        let leases = try PostgresLeases(url: database.url)
        // Nothing made the schema: the handle cannot register, and says so.
        #expect(throws: (any Error).self) { try leases.register(node: NodeID("node-a"), leaseMs: 60_000) }
        _ = try PostgresStore(url: database.url)
        #expect(try leases.register(node: NodeID("node-a"), leaseMs: 60_000) == [])
    }
}
