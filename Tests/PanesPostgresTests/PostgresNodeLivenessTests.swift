import Foundation
import PanesCore
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

/// Each node holds a liveness lock on its heartbeat connection: when that connection ends (the
/// process was killed), every other node finds the node gone at its next check, long before
/// its lease would run out; a node whose connection merely lingers keeps its lock.
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresNodeLivenessTests {
    @Test func aNodeWhoseConnectionEndsIsGoneAtOnceAndComesBackOnlyByRenewingLate() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        let b = try PostgresStore(url: database.url)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        #expect(try a.heartbeat(node: nodeA, leaseMs: 60_000) == [])
        #expect(try b.heartbeat(node: nodeB, leaseMs: 60_000) == [])
        #expect(try b.checkNodes(node: nodeB, leaseMs: 60_000) == [], "a holds its lock: alive, whatever asks")
        #expect(try b.heartbeat(node: nodeB, leaseMs: 60_000) == [])
        // a's process dies: its connection ends, and its lock with it, a minute before its lease.
        a.close()
        // The backend ends a moment after the socket closes: asked again until then.
        var gone = try b.checkNodes(node: nodeB, leaseMs: 60_000)
        for _ in 0..<200 where gone.isEmpty {
            usleep(10_000)
            gone = try b.checkNodes(node: nodeB, leaseMs: 60_000)
        }
        #expect(gone == [nodeA])
        #expect(try b.heartbeat(node: nodeB, leaseMs: 60_000) == [nodeA], "gone for every node, in the database")
        // Had a only lost its connection, its next heartbeat (on a new one) hears that its lease
        // was ended (it closes its scenes), takes its lock again, and counts as alive from then on.
        let again = try PostgresStore(url: database.url)
        #expect(try again.heartbeat(node: nodeA, leaseMs: 60_000) == [nodeA])
        #expect(try b.checkNodes(node: nodeB, leaseMs: 60_000) == [])
    }

    @Test func aNodeThatHoldsItsLockIsNeverEndedBeforeItsLease() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        let b = try PostgresStore(url: database.url)
        #expect(try a.heartbeat(node: NodeID("node-a"), leaseMs: 60_000) == [])
        for _ in 0..<3 { #expect(try b.checkNodes(node: NodeID("node-b"), leaseMs: 60_000) == []) }
        // The heartbeat connection set its keepalives so a partition cannot free the lock early.
        #expect(try a.connection.query("SELECT setting FROM pg_settings WHERE name = 'tcp_keepalives_idle'").text(0, 0) == "60")
        withExtendedLifetime(a) {}
    }
}
