import Foundation
import PanesCore
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

/// Issue 27 §3: a transaction of a node cut off while its statement runs holds the node's row,
/// and no limit of the database's ends it (the idle-transaction limit is for idle ones); TCP
/// gives up on its connection some 15 minutes later. Until then no other node could end the
/// node's lease, and every resume of its windows was told `storage_failed`. Now a node check
/// that finds the lease run out ends the backends named for that node and ends the lease; a
/// process that rejoined under a new identity works on connections named for that one only,
/// and is never ended for its old identity.
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresLapsedNodesTests {
    /// A statement run on a thread of its own, as a cut-off node's would run on in the database.
    final class Running: @unchecked Sendable {
        private let lock = NSLock()
        private var outcome: Result<Void, PostgresError>?
        private let done = DispatchSemaphore(value: 0)

        init(_ connection: PostgresConnection, _ sql: String) {
            Thread {
                let result = Result { () throws(PostgresError) in try connection.execute(sql) }
                self.lock.withLock { self.outcome = result }
                self.done.signal()
            }.start()
        }

        /// How the statement ended; nil while it runs (up to `seconds`).
        func ended(within seconds: Double) -> Result<Void, PostgresError>? {
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
            done.signal()
            return lock.withLock { outcome }
        }
    }

    /// A session named as `node` names its connections, holding `node`'s row in a statement that
    /// sleeps ten minutes (`BEGIN` first: the lock is the transaction's); returns once it sleeps.
    static func holdRow(of node: NodeID, _ database: TestDatabase, url: String? = nil) throws -> (PostgresConnection, Running) {
        let holder = try PostgresConnection(url: url ?? database.url)
        holder.applicationName = PostgresStore.applicationName(for: node)
        holder.close()
        try holder.reconnectIfNeeded()
        let running = Running(holder, "BEGIN; SELECT 1 FROM nodes WHERE id = '\(node.rawValue)' FOR UPDATE; SELECT pg_sleep(600)")
        let admin = try database.connect()
        for _ in 0..<500 where try admin.integer(
            "SELECT count(*)::bigint FROM pg_stat_activity WHERE pid = $1::int AND state = 'active' AND wait_event = 'PgSleep'",
            [.int(Int64(holder.backendPID))]) == 0 {
            usleep(10_000)
        }
        return (holder, running)
    }

    /// Checks as `node` until `expected` are gone (a little over two leases of 1 s at most).
    static func checkUntil(_ store: any NodeLeases, asking node: NodeID, gone expected: [NodeID]) throws -> [NodeID] {
        var gone = try store.checkNodes(node: node, leaseMs: 1_000)
        for _ in 0..<40 where gone != expected {
            usleep(50_000)
            gone = try store.checkNodes(node: node, leaseMs: 1_000)
        }
        return gone
    }

    static func applicationName(of pid: Int32, _ database: TestDatabase) throws -> String? {
        let rows = try database.connect().query("SELECT application_name FROM pg_stat_activity WHERE pid = $1::int",
                                                [.int(Int64(pid))])
        return rows.count > 0 ? rows.text(0, 0) : nil
    }

    @Test func aLapsedNodesRunningStatementIsEndedAndItsLeaseWithIt() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        let b = try PostgresStore(url: database.url)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        _ = try a.register(node: nodeA, leaseMs: 1_000)
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        #expect(try Self.applicationName(of: a.connection.backendPID, database) == "panes:node-a")
        let (_, running) = try Self.holdRow(of: nodeA, database)
        #expect(running.ended(within: 0.1) == nil, "it sleeps, holding a's row")
        // a is cut off: it renews no more, and its lease runs out a second after it began.
        #expect(try Self.checkUntil(b, asking: nodeB, gone: [nodeA]) == [nodeA], "b ended a's backends, and a's lease")
        guard case .failure(let error)? = running.ended(within: 10) else {
            Issue.record("the statement holding a's row still runs")
            return
        }
        #expect(error.kind == .connection, "terminated: \(error)")
        // The heartbeat's connection and the one holding the row.
        #expect(b.takeLeaseEndingNotes() == [.connectionsEnded(nodeA, count: 2)])
        #expect(b.takeLeaseEndingNotes() == [], "taken once")
        #expect(throws: NodeRevoked(node: nodeA)) { try a.heartbeat(node: nodeA, leaseMs: 1_000) }
    }

    /// A lease that still runs is never cut short by ending its node's backends: the check waits,
    /// as before, for the transaction holding the row (here, a's lock is free, as when a's
    /// heartbeat connection has dropped, so b would end its lease once it can).
    @Test func aNodeWhoseLeaseRunsHasNoBackendEnded() throws {
        let database = try TestDatabase()
        let a = try PostgresStore(url: database.url)
        let b = try PostgresStore(url: database.url)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        _ = try a.register(node: nodeA, leaseMs: 60_000)
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        a.close()
        let (holder, running) = try Self.holdRow(of: nodeA, database)
        // Asked with a short lease, so each check waits a tenth of a second for the row.
        for _ in 0..<3 { #expect(try b.checkNodes(node: nodeB, leaseMs: 1_000) == []) }
        #expect(running.ended(within: 0.1) == nil, "still running")
        #expect(b.takeLeaseEndingNotes() == [])
        _ = try database.connect().query("SELECT pg_terminate_backend($1::int)", [.int(Int64(holder.backendPID))])
        #expect(try Self.checkUntil(b, asking: nodeB, gone: [nodeA]) == [nodeA], "ended once the transaction is over")
    }

    /// The race: a is cut off in the middle of a statement on its heartbeat's connection (which
    /// holds its liveness lock and its row), its process finds its lease over and rejoins as a2,
    /// and b then ends a's backends. a2 registers on a connection named for it, and its store
    /// thread's connection, a's until then, is made anew for a2 at its fence (never renamed:
    /// a check could have read a's name just before); b ends none of a2's, and a2 stays alive.
    @Test func aNodeThatRejoinedUnderANewIdentityIsNeverEndedForItsLapsedOne() throws {
        let database = try TestDatabase()
        let cutOff = try PostgresStore(url: database.url)
        let rejoined = try PostgresStore(url: database.url)
        let store = try PostgresStore(url: database.url)
        let b = try PostgresStore(url: database.url)
        let (nodeA, nodeA2, nodeB) = (NodeID("node-a"), NodeID("node-a2"), NodeID("node-b"))
        _ = try cutOff.register(node: nodeA, leaseMs: 1_500)
        store.fence(as: nodeA, leaseMs: 1_500)
        _ = try store.liveNodes()
        #expect(try Self.applicationName(of: store.connection.backendPID, database) == "panes:node-a")
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        let running = Running(cutOff.connection,
                              "BEGIN; SELECT 1 FROM nodes WHERE id = 'node-a' FOR UPDATE; SELECT pg_sleep(600)")
        let oldStore = store.connection.backendPID

        _ = try rejoined.register(node: nodeA2, leaseMs: 60_000)
        store.fence(as: nodeA2, leaseMs: 60_000)
        _ = try store.liveNodes()
        let (heartbeatA2, storeA2) = (rejoined.connection.backendPID, store.connection.backendPID)
        #expect(storeA2 != oldStore, "a new connection, not a renamed one")
        #expect(try Self.applicationName(of: heartbeatA2, database) == "panes:node-a2")
        #expect(try Self.applicationName(of: storeA2, database) == "panes:node-a2")
        #expect(running.ended(within: 0.1) == nil, "a's statement still runs")

        #expect(try Self.checkUntil(b, asking: nodeB, gone: [nodeA]) == [nodeA], "b ended a's backends, and a's lease")
        #expect(running.ended(within: 10) != nil, "a's transaction was ended")
        #expect(b.takeLeaseEndingNotes() == [.connectionsEnded(nodeA, count: 1)], "a's heartbeat's connection only")
        #expect(try rejoined.heartbeat(node: nodeA2, leaseMs: 60_000) == [nodeA])
        _ = try store.liveNodes()
        #expect(rejoined.connection.backendPID == heartbeatA2 && store.connection.backendPID == storeA2,
                "a2's connections were never ended")
        #expect(try b.checkNodes(node: nodeB, leaseMs: 60_000) == [nodeA], "a2 holds its lock: alive")
        withExtendedLifetime(cutOff) {}
    }

    /// Without the right to signal the lapsed node's backends (here they are a superuser's, and
    /// b's role is not one; in a deployment, nodes under different roles without
    /// `pg_signal_backend`), b notes the refusal and waits as before; the check does not fail.
    @Test func aCheckThatMayNotEndTheBackendsNotesItAndWaits() throws {
        let database = try TestDatabase()
        let role = "panes_role_" + database.name.suffix(20)
        let admin = try database.connect()
        try admin.execute("CREATE ROLE \(role) LOGIN")
        defer {
            _ = try? admin.execute("DROP OWNED BY \(role)")
            _ = try? admin.execute("DROP ROLE \(role)")
        }
        let a = try PostgresStore(url: database.url)
        try admin.execute("GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role); "
                              + "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role)")
        let b = try PostgresStore(url: Self.url(database.url, user: role), migrating: false)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        _ = try a.register(node: nodeA, leaseMs: 1_000)
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        let (holder, running) = try Self.holdRow(of: nodeA, database)
        var notes: [LeaseEndingNote] = []
        for _ in 0..<60 where notes.isEmpty {
            #expect(try b.checkNodes(node: nodeB, leaseMs: 1_000) == [])
            notes = b.takeLeaseEndingNotes()
            usleep(50_000)
        }
        guard case .connectionsNotEnded(nodeA, let reason)? = notes.first, notes.count == 1 else {
            Issue.record("no refusal noted: \(notes)")
            return
        }
        #expect(reason.hasPrefix(PostgresStore.insufficientPrivilege), "insufficient_privilege: \(reason)")
        #expect(running.ended(within: 0.1) == nil, "a's transaction runs on")
        _ = try admin.query("SELECT pg_terminate_backend($1::int)", [.int(Int64(holder.backendPID))])
        #expect(try Self.checkUntil(b, asking: nodeB, gone: [nodeA]) == [nodeA], "ended once it is over")
    }

    /// The likely misconfiguration (`docs/operating.md`): two nodes logging in as two ordinary
    /// roles, neither with `pg_signal_backend`. b notes the refusal and waits; once its role is
    /// granted `pg_signal_backend`, it ends a's backends and a's lease.
    @Test func twoOrdinaryRolesWithoutPgSignalBackendMayNotEndEachOthersBackends() throws {
        let database = try TestDatabase()
        let (roleA, roleB) = ("panes_ra_" + database.name.suffix(20), "panes_rb_" + database.name.suffix(20))
        let admin = try database.connect()
        _ = try PostgresStore(url: database.url)
        for role in [roleA, roleB] {
            try admin.execute("CREATE ROLE \(role) LOGIN; GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role); "
                                  + "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role)")
        }
        defer {
            for role in [roleA, roleB] {
                _ = try? admin.execute("DROP OWNED BY \(role)")
                _ = try? admin.execute("DROP ROLE \(role)")
            }
        }
        let a = try PostgresStore(url: Self.url(database.url, user: roleA), migrating: false)
        let b = try PostgresStore(url: Self.url(database.url, user: roleB), migrating: false)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        _ = try a.register(node: nodeA, leaseMs: 1_000)
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        let (_, running) = try Self.holdRow(of: nodeA, database, url: Self.url(database.url, user: roleA))
        var notes: [LeaseEndingNote] = []
        for _ in 0..<60 where notes.isEmpty {
            #expect(try b.checkNodes(node: nodeB, leaseMs: 1_000) == [])
            notes = b.takeLeaseEndingNotes()
            usleep(50_000)
        }
        guard case .connectionsNotEnded(nodeA, let reason)? = notes.first, notes.count == 1 else {
            Issue.record("no refusal noted: \(notes)")
            return
        }
        #expect(reason.hasPrefix(PostgresStore.insufficientPrivilege), "insufficient_privilege: \(reason)")
        #expect(running.ended(within: 0.1) == nil, "a's transaction runs on")
        try admin.execute("GRANT pg_signal_backend TO \(roleB)")
        #expect(try Self.checkUntil(b, asking: nodeB, gone: [nodeA]) == [nodeA], "b ended a's backends, and a's lease")
        #expect(running.ended(within: 10) != nil, "a's transaction was ended")
        withExtendedLifetime(a) {}
    }

    /// a's backends under two roles, one b's role may signal (its own) and one it may not (a
    /// superuser's): b ends the first and counts it, and notes the refusal of the other; a
    /// refusal for one does not hide, nor undo, the signal sent to the other.
    @Test func backendsTheRoleMaySignalAreEndedAndCountedBesideOnesItMayNot() throws {
        let database = try TestDatabase()
        let role = "panes_rm_" + database.name.suffix(20)
        let admin = try database.connect()
        _ = try PostgresStore(url: database.url)
        try admin.execute("CREATE ROLE \(role) LOGIN; GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role); "
                              + "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role)")
        defer {
            _ = try? admin.execute("DROP OWNED BY \(role)")
            _ = try? admin.execute("DROP ROLE \(role)")
        }
        let a = try PostgresStore(url: Self.url(database.url, user: role), migrating: false)
        let b = try PostgresStore(url: Self.url(database.url, user: role), migrating: false)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        _ = try a.register(node: nodeA, leaseMs: 1_000)
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        let heartbeatA = a.connection.backendPID
        let (_, running) = try Self.holdRow(of: nodeA, database)
        var notes: [LeaseEndingNote] = []
        for _ in 0..<60 where notes.isEmpty {
            #expect(try b.checkNodes(node: nodeB, leaseMs: 1_000) == [])
            notes = b.takeLeaseEndingNotes()
            usleep(50_000)
        }
        guard notes.count == 2, case .connectionsNotEnded(nodeA, let reason) = notes[1] else {
            Issue.record("not one ended and one refused: \(notes)")
            return
        }
        #expect(notes[0] == .connectionsEnded(nodeA, count: 1), "a's heartbeat's connection, under b's role")
        #expect(reason.hasPrefix(PostgresStore.insufficientPrivilege), "insufficient_privilege: \(reason)")
        var gone: Int64? = 1
        for _ in 0..<250 where gone != 0 {
            gone = try admin.integer("SELECT count(*)::bigint FROM pg_stat_activity WHERE pid = $1::int", [.int(Int64(heartbeatA))])
            if gone != 0 { usleep(20_000) }
        }
        #expect(gone == 0, "a's heartbeat's backend was ended")
        #expect(running.ended(within: 0.1) == nil, "the superuser's transaction runs on")
        withExtendedLifetime(a) {}
    }

    /// The end tried again after a's backends were ended leaves a renewal of a's that committed
    /// in between alone: the signals went out because the lease had run out as that statement
    /// saw it, but a renewal that began before then can still commit and keep the lease running.
    /// Here the renewal holds a's row as b's retry starts, and commits while b waits for the row.
    @Test func theEndTriedAfterTheBackendsWereEndedLeavesARenewalThatCommittedMeanwhile() throws {
        let database = try TestDatabase()
        let b = try PostgresStore(url: database.url)
        let (nodeA, nodeB) = (NodeID("node-a"), NodeID("node-b"))
        let admin = try database.connect()
        _ = try b.register(node: nodeB, leaseMs: 60_000)
        try admin.execute("INSERT INTO nodes (id, lease_until) VALUES ('node-a', (extract(epoch FROM now()) * 1000)::bigint - 1)")
        let renewal = try database.connect()
        try renewal.execute("BEGIN; UPDATE nodes SET lease_until = (extract(epoch FROM now()) * 1000)::bigint + 60000 "
                                + "WHERE id = 'node-a'")
        let backend = b.connection.backendPID
        let retry = Ending { try b.endLease(of: nodeA, leaseMs: 60_000, onlyIfRunOut: true) }
        var waiting: Int64? = 0
        for _ in 0..<500 where waiting == 0 {
            usleep(10_000)
            waiting = try admin.integer("SELECT count(*)::bigint FROM pg_stat_activity WHERE pid = $1::int AND wait_event_type = 'Lock'",
                                        [.int(Int64(backend))])
        }
        #expect(waiting == 1, "b's retry waits for a's row")
        try renewal.execute("COMMIT")
        let ended = retry.result(within: 10)
        #expect((try? ended?.get()) == false, "the renewal stands: \(String(describing: ended))")
        #expect(try admin.integer("SELECT CASE WHEN lease_until > (extract(epoch FROM now()) * 1000)::bigint THEN 1 ELSE 0 END::bigint "
                                      + "FROM nodes WHERE id = 'node-a'") == 1, "a's lease runs")
    }

    /// `body` run on a thread of its own.
    final class Ending: @unchecked Sendable {
        private let lock = NSLock()
        private var outcome: Result<Bool, any Error>?
        private let done = DispatchSemaphore(value: 0)

        init(_ body: @escaping () throws -> Bool) {
            nonisolated(unsafe) let body = body
            Thread {
                let result = Result { try body() }
                self.lock.withLock { self.outcome = result }
                self.done.signal()
            }.start()
        }

        func result(within seconds: Double) -> Result<Bool, any Error>? {
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
            return lock.withLock { outcome }
        }
    }

    @Test func anIdentityPostgreSQLCouldNotHoldWholeIsNotNamed() {
        #expect(PostgresStore.applicationName(for: NodeID("node_3k2j")) == "panes:node_3k2j")
        #expect(PostgresStore.applicationName(for: NodeID(String(repeating: "n", count: 57))) == "panes:" + String(repeating: "n", count: 57))
        #expect(PostgresStore.applicationName(for: NodeID(String(repeating: "n", count: 58))) == nil, "cut at 63 bytes")
        #expect(PostgresStore.applicationName(for: NodeID("nœud")) == nil, "turned into ?")
    }

    /// `postgres://old@host/db` → `postgres://user@host/db`.
    static func url(_ url: String, user: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        return String(url[..<scheme.upperBound]) + user + String(url[at...])
    }
}
