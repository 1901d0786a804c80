import Foundation
import PanesCore
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

/// Each node holds a liveness lock on its heartbeat connection: when that connection ends (the
/// process was killed, or the connection was cut), every other node finds the node gone at its
/// next check, long before its lease would run out, and ends its lease for good; a node whose
/// connection merely lingers keeps its lock.
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresNodeLivenessTests {
    @Test func aNodeWhoseConnectionEndsIsGoneAtOnceAndForGood() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        let b = try PostgresStore(url: database.url)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        #expect(try a.register(node: nodeA, leaseMs: 60_000) == [])
        #expect(try b.register(node: nodeB, leaseMs: 60_000) == [])
        #expect(try b.checkNodes(node: nodeB, leaseMs: 60_000) == [], "a holds its lock: alive, whatever asks")
        #expect(try b.heartbeat(node: nodeB, leaseMs: 60_000) == [])
        // a's process dies: its connection ends, and its lock with it, a minute before its lease.
        a.close()
        #expect(try Self.gone(asking: b, nodeB) == [nodeA])
        #expect(try b.heartbeat(node: nodeB, leaseMs: 60_000) == [nodeA], "gone for every node, in the database")
        // Had a only lost its connection, its next heartbeat (on a new one) hears that its lease
        // has ended: it stops serving and comes back as a new node.
        let again = try PostgresStore(url: database.url)
        #expect(throws: NodeRevoked(node: nodeA)) { try again.heartbeat(node: nodeA, leaseMs: 60_000) }
        #expect(try again.register(node: NodeID("node-a2"), leaseMs: 60_000) == [nodeA])
        #expect(try b.checkNodes(node: nodeB, leaseMs: 60_000) == [nodeA])
    }

    @Test func aNodeThatHoldsItsLockIsNeverEndedBeforeItsLease() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        let b = try PostgresStore(url: database.url)
        #expect(try a.register(node: NodeID("node-a"), leaseMs: 60_000) == [])
        for _ in 0..<3 { #expect(try b.checkNodes(node: NodeID("node-b"), leaseMs: 60_000) == []) }
        // The heartbeat connection set its keepalives so a partition cannot free the lock early.
        #expect(try a.connection.query("SELECT setting FROM pg_settings WHERE name = 'tcp_keepalives_idle'").text(0, 0) == "60")
        withExtendedLifetime(a) {}
    }

    /// Issue 27 §3: a node cut off between two round trips of a renewal left its transaction
    /// open in the database, its row locked by the renewal's UPDATE. Every other node found its
    /// lease run out but could not end it (that waits for the row), for as long as TCP took to
    /// give up on the connection (some 15 minutes), and a reload waiting on it forked. The
    /// database ends such a transaction after a lease, as it does the store thread's.
    @Test func aRenewalLeftOpenByACutOffNodeHoldsItsLeaseNoLongerThanALease() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        let b = try PostgresStore(url: database.url)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        _ = try a.register(node: nodeA, leaseMs: 1_000)
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        // A renewal's first round trip reached the database; the rest never comes.
        try a.connection.execute("BEGIN")
        try a.connection.execute("UPDATE nodes SET lease_until = lease_until WHERE id = 'node-a'")
        var gone = try b.checkNodes(node: nodeB, leaseMs: 1_000)
        for _ in 0..<200 where gone.isEmpty {
            usleep(50_000)
            gone = try b.checkNodes(node: nodeB, leaseMs: 1_000)
        }
        #expect(gone == [nodeA], "the database ended a's idle transaction, and b a's lease")
        withExtendedLifetime(a) {}
    }

    /// A new identity is registered on a connection of its own, named for it (another node ends
    /// a lapsed identity's connections by that name: `PostgresLapsedNodesTests`); the one left
    /// behind by the rejoin closes, and the locks it held go with it.
    @Test func aNewIdentityIsRegisteredOnANewConnectionNamedForIt() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        // An identity whose lease has ended (here: ran out at once), then a new one.
        _ = try a.register(node: NodeID("node-a"), leaseMs: -1_000)
        let old = a.connection.backendPID
        _ = try a.register(node: NodeID("node-a2"), leaseMs: 60_000)
        #expect(a.connection.backendPID != old)
        #expect(a.lockedNodes == [NodeID("node-a2")])
        let mine = try a.connection.query(
            "SELECT application_name, (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) "
                + "FROM pg_stat_activity WHERE pid = pg_backend_pid()")
        #expect(mine.text(0, 0) == "panes:node-a2" && mine.int64(0, 1) == 1)
        // The old backend exits after the connection is closed, in its own time: asked until
        // it has (a few seconds at most).
        let admin = try database.connect()
        var held: Int64? = 1
        for _ in 0..<250 where held != 0 {
            held = try admin.integer("SELECT count(*)::bigint FROM pg_locks WHERE pid = $1::int AND locktype = 'advisory'",
                                     [.int(Int64(old))])
            if held != 0 { usleep(20_000) }
        }
        #expect(held == 0, "the old connection let go of a's lock")
    }

    @Test func theHeartbeatsWaitEndsAtOnceWhenItsConnectionIsCut() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        let admin = try PostgresStore(url: database.url)
        _ = try a.register(node: NodeID("node-a"), leaseMs: 60_000)
        #expect(a.awaitHeartbeatConnection(timeoutMs: 50) == false, "nothing happened: the time ran out")
        a.interruptHeartbeatWait()
        let interrupted = Date()
        #expect(a.awaitHeartbeatConnection(timeoutMs: 10_000) == false)
        #expect(Date().timeIntervalSince(interrupted) < 5, "woken, not timed out")
        _ = try admin.connection.query("SELECT pg_terminate_backend($1::int)", [.int(Int64(a.connection.backendPID))])
        let cut = Date()
        #expect(a.awaitHeartbeatConnection(timeoutMs: 10_000) == true)
        #expect(Date().timeIntervalSince(cut) < 5, "seen when it happened, not at the end of the wait")
        // A lost connection is waited on no further: its loss was said once.
        #expect(a.awaitHeartbeatConnection(timeoutMs: 50) == false)
        // The next heartbeat takes the lock again on a new connection.
        #expect(try a.heartbeat(node: NodeID("node-a"), leaseMs: 60_000) == [])
        #expect(a.connection.backendPID != 0)
    }

    /// A heartbeat whose connection died unnoticed (no wait saw it go) finds out at its
    /// transaction's first round trip, and the transaction starts again on a new connection,
    /// where the lock must be taken first. Before, taking it there set the keepalives with a
    /// synchronous call that libpq refuses in pipeline mode: that heartbeat (or a rejoining
    /// node's registration, seen in the cluster tests' logs) failed, and waited a beat.
    @Test func aHeartbeatOnAConnectionThatDiedUnnoticedRenewsOnANewOneWithItsLock() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        let b = try PostgresStore(url: database.url)
        let admin = try PostgresStore(url: database.url)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        _ = try a.register(node: nodeA, leaseMs: 60_000)
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        let old = a.connection.backendPID
        _ = try admin.connection.query("SELECT pg_terminate_backend($1::int)", [.int(Int64(old))])
        // Until the backend is gone in the database, its lock is still held there.
        for _ in 0..<200 where try admin.connection.integer(
            "SELECT count(*)::bigint FROM pg_stat_activity WHERE pid = $1::int", [.int(Int64(old))]) != 0 {
            usleep(10_000)
        }
        #expect(a.connection.isConnected, "libpq has not noticed: nothing was read since")
        #expect(try a.heartbeat(node: nodeA, leaseMs: 60_000) == [])
        #expect(a.connection.backendPID != old, "renewed on a new connection")
        #expect(try b.checkNodes(node: nodeB, leaseMs: 60_000) == [], "which holds a's lock: a is alive")
        #expect(try a.connection.query("SELECT setting FROM pg_settings WHERE name = 'tcp_keepalives_idle'").text(0, 0) == "60",
                "with the keepalives the lock needs")
    }

    @Test func longGoneNodesAreForgottenOnlyOnceNoClaimNamesThem() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url + "?panes_dead_node_retention_ms=0")
        let (a, b) = (NodeID("node-a"), NodeID("node-b"))
        _ = try store.register(node: a, leaseMs: -1_000)
        _ = try store.register(node: b, leaseMs: -1_000)
        let claim = SessionClaim(node: a, epoch: 1)
        try store.apply([.putSession(SceneSession(id: SessionID("s1"), secretHash: .unmatchable,
                                                  owner: OwnerKey(workspace: "w", user: "u"), role: .window,
                                                  configuration: "workspace", createdAt: 0, lastActiveAt: 0)),
                         .coordination(.claimSession(SessionID("s1"), claim))])
        usleep(20_000)
        try store.checkpoint()
        let left = try store.connection.query("SELECT id FROM nodes ORDER BY id")
        #expect((0..<left.count).map { left.text($0, 0) } == ["node-a"], "b is forgotten; a's claim names it")
        #expect(try store.checkNodes(node: NodeID("node-c"), leaseMs: 60_000) == [a])
    }

    /// Asks until the node's connection has ended in the database (a moment after its socket
    /// closes), and returns the nodes gone then.
    static func gone(asking store: PostgresStore, _ node: NodeID) throws -> [NodeID] {
        var gone = try store.checkNodes(node: node, leaseMs: 60_000)
        for _ in 0..<200 where gone.isEmpty {
            usleep(10_000)
            gone = try store.checkNodes(node: node, leaseMs: 60_000)
        }
        return gone
    }
}
