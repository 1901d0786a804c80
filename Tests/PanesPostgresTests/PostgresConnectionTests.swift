import Foundation
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresConnectionTests {
    @Test func valuesRoundTripTypedAndBinary() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        let text = "e\u{301} 👩🏽‍💻 \"quoted\" \\ ✓"
        let rows = try connection.query("SELECT $1::bigint, $2::text, $3::bytea, $4::text",
                                        [.int(Int64.min), .text(text), .bytes([0, 1, 255]), .null])
        #expect(rows.int64(0, 0) == Int64.min)
        #expect(rows.text(0, 1) == text)
        #expect(rows.bytes(0, 2) == [0, 1, 255])
        #expect(rows.isNull(0, 3))
        // PostgreSQL's text cannot hold U+0000: it is sent as U+FFFD rather than refused.
        #expect(try connection.query("SELECT $1::text", [.text("a\u{0}b")]).text(0, 0) == "a\u{FFFD}b")
    }

    @Test func aNotificationSentWithTheCommitArrivesIntactAndOnlyIfItCommits() throws {
        let database = try TestDatabase()
        let listener = try database.connect()
        try listener.execute("LISTEN panes")
        let connection = try database.connect()
        let payload = "it's \\ \"quoted\" $$ ✓ e\u{301} a\u{0}b"
        #expect(throws: PostgresError.self) {
            try connection.transaction {
                try connection.notifyAtCommit("panes", "rolled back")
                throw PostgresError(.injectedFault, "the body fails")
            }
        }
        try connection.transaction(resolvesLostCommit: true) { try connection.notifyAtCommit("panes", payload) }
        var received: [String] = []
        for _ in 0..<50 where received.isEmpty {
            received += try listener.receiveNotifications().map(\.payload)
            if received.isEmpty { Thread.sleep(forTimeInterval: 0.02) }
        }
        #expect(received == [payload.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}")])
        // A failing statement before the COMMIT ends the transaction; the connection goes on.
        #expect(throws: PostgresError.self) {
            try connection.transaction { try connection.notifyAtCommit("panes", String(repeating: "x", count: 9_000)) }
        }
        #expect(try connection.integer("SELECT 1") == 1)
    }

    @Test func aRefusedStatementCarriesItsSQLStateAndIsNotTransient() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY)")
        try connection.query("INSERT INTO t VALUES ($1)", [.int(1)])
        do {
            try connection.query("INSERT INTO t VALUES ($1)", [.int(1)])
            Issue.record("a duplicate key was accepted")
        } catch {
            #expect(error.kind == .server)
            #expect(error.sqlState == "23505")
            #expect(!error.isTransient)
        }
        // The connection is still usable afterwards.
        #expect(try connection.integer("SELECT count(*) FROM t") == 1)
    }

    @Test func aTerminatedConnectionFailsOnceThenReconnects() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        let admin = try database.connect()
        try admin.query("SELECT pg_terminate_backend($1::int)", [.int(Int64(connection.backendPID))])
        do {
            try connection.query("SELECT 1::bigint")
            Issue.record("a terminated connection answered")
        } catch {
            #expect(error.isTransient, "\(error)")
        }
        #expect(try connection.integer("SELECT 2::bigint") == 2)
    }

    @Test func aTransactionSendsItsStatementsTogetherAndItsCommitInOneMoreRoundTrip() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY)")
        let count = try connection.transaction(resolvesLostCommit: true) { () -> Int64? in
            for id in 1...3 { try connection.send("INSERT INTO t VALUES ($1)", [.int(Int64(id))]) }
            #expect(connection.roundTrips == 0, "a statement nobody reads went alone")
            // BEGIN, the transaction id, the three inserts and this read: one round trip.
            let count = try connection.integer("SELECT count(*) FROM t")
            #expect(connection.roundTrips == 1)
            try connection.send("INSERT INTO t VALUES ($1)", [.int(4)])
            return count
        }
        #expect(count == 3)
        // The last insert went with the COMMIT.
        #expect(connection.roundTrips == 2)
        #expect(try connection.integer("SELECT count(*) FROM t") == 4)
    }

    @Test func aFailingStatementSentAheadFailsTheTransactionAtItsRoundTripAndNothingStays() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY)")
        try connection.query("INSERT INTO t VALUES ($1)", [.int(1)])
        do {
            try connection.transaction {
                try connection.send("INSERT INTO t VALUES ($1)", [.int(2)])
                try connection.send("INSERT INTO t VALUES ($1)", [.int(1)])  // a duplicate key
                try connection.send("INSERT INTO t VALUES ($1)", [.int(3)])
                _ = try connection.integer("SELECT count(*) FROM t")
                Issue.record("the round trip did not report the failure")
            }
            Issue.record("the transaction committed")
        } catch {
            #expect((error as? PostgresError)?.sqlState == "23505")
            #expect((error as? PostgresError)?.sql == "INSERT INTO t VALUES ($1)")
        }
        #expect(try connection.integer("SELECT count(*) FROM t") == 1)
        // A statement first prepared in the aborted pipeline is prepared again, and works.
        try connection.transaction { try connection.send("INSERT INTO t VALUES ($1)", [.int(5)]) }
        #expect(try connection.integer("SELECT count(*) FROM t") == 2)
    }

    @Test func aTransactionWhoseConnectionDiedWhileIdleStartsAgainOnANewOne() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        let admin = try database.connect()
        try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY)")
        try admin.query("SELECT pg_terminate_backend($1::int)", [.int(Int64(connection.backendPID))])
        var runs = 0
        try connection.transaction(resolvesLostCommit: true) {
            runs += 1
            try connection.send("INSERT INTO t VALUES ($1)", [.int(1)])
            _ = try connection.integer("SELECT count(*) FROM t")
        }
        #expect(runs == 2)
        #expect(try connection.integer("SELECT count(*) FROM t") == 1)
    }

    @Test func anUnreachableServerIsAConnectionError() {
        #expect {
            try PostgresConnection(url: "postgres://postgres@127.0.0.1:1/none?connect_timeout=2")
        } throws: { error in
            (error as? PostgresError)?.kind == .connection && (error as? PostgresError)?.isTransient == true
        }
    }

    @Test func channelNamesReachTheLockStatementIntactAndInOrder() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        let names = [#"preferences:user:"quoted"@acme"#, #"document:back\slash"#, "session:{braces},comma", "", "NULL",
                     #"[3,"a\"b\\c",-2]"#, "é✓🦊 e\u{301}", #"\\\""#, " spaced ", "{}"]
        let rows = try connection.query("SELECT k FROM unnest($1::text[]) AS k", [.text(PostgresStore.arrayLiteral(names))])
        #expect((0..<rows.count).map { rows.text($0, 0) } == names)
    }
}
