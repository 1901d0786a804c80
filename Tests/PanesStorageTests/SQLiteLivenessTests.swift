import Foundation
import PanesCore
@testable import PanesStorage
import PanesStorageTestSupport
import Testing

/// A session's liveness (last active, live since, failed restores) in its narrow table
/// (migration 13): what a resume and a close write, what a load and an inspector read, what a
/// delete removes, and how a database from before it is moved over.
@Suite struct SQLiteLivenessTests {
    let database: TemporaryDatabase
    var path: String { database.path }

    init() throws { database = try TemporaryDatabase() }

    /// A database as builds before migration 13 left it: the liveness in `sessions`' columns.
    private func makeVersion12Database(_ rows: [(id: String, lastActive: Int64, liveSince: Int64?, failed: Int64)]) throws {
        let old = try SQLiteConnection(path: path, mode: .readWrite(synchronous: .full))
        try old.enableWriteAheadLog()
        for migration in Migrations.all.prefix(while: { $0.version <= 12 }) { try migration.apply(old) }
        try old.execute("PRAGMA user_version = 12")
        for row in rows {
            try old.run("""
                INSERT INTO sessions (id, workspace, user, secret_hash, role, configuration, title, user_info,
                                      created_at, last_active_at, failed_restores, live_since)
                VALUES (?1, 'acme', 'ada', 'x', 'window', 'workspace', '', '{}', 5, ?2, ?3, ?4)
                """, [.text(row.id), .int(row.lastActive), .int(row.failed), row.liveSince.map { .int($0) } ?? .null])
        }
        old.close()
    }

    private func columns(of table: String, in connection: SQLiteConnection) throws -> [String] {
        var names: [String] = []
        try connection.forEachRow("SELECT name FROM pragma_table_info(?1)", [.text(table)]) { names.append($0.text(at: 0) ?? "") }
        return names
    }

    private func session(_ id: String, lastActive: Int64, liveSince: Int64?, failed: Int) -> SceneSession {
        SceneSession(id: SessionID(id), secretHash: SecretHash(stored: "x"), owner: Fixtures.owner, role: .window,
                     configuration: "workspace", createdAt: 5, lastActiveAt: lastActive, failedRestores: failed,
                     liveSince: liveSince)
    }

    @Test func aVersionTwelveDatabaseMovesEverySessionsLivenessIntoItsOwnTable() throws {
        try makeVersion12Database([("a1", 1_700_000_000_000, 1_700_000_000_500, 2), ("b2", 1_600_000_000_000, nil, 0)])
        let store = try SQLiteStore(path: path)

        #expect(try Migrations.version(of: store.connection) == Migrations.latest)
        #expect(try store.loadState().sessions == [
            session("a1", lastActive: 1_700_000_000_000, liveSince: 1_700_000_000_500, failed: 2),
            session("b2", lastActive: 1_600_000_000_000, liveSince: nil, failed: 0),
        ])
        #expect(try columns(of: "session_liveness", in: store.connection)
            == ["session", "last_active_at", "live_since", "failed_restores"])
        let left = try columns(of: "sessions", in: store.connection)
        #expect(!left.contains("last_active_at") && !left.contains("live_since") && !left.contains("failed_restores"))

        // And it is written there from now on: a resume after the migration, read after a reopen.
        let resumed = session("b2", lastActive: 1_800_000_000_000, liveSince: 1_800_000_000_000, failed: 0)
        try store.apply([.putSessionLiveness(SessionLiveness(of: resumed))])
        store.close()
        #expect(try SQLiteStore(path: path).loadState().sessions.last == resumed)
    }

    /// Each migration is one transaction with its `user_version`: one that stops part-way
    /// (a kill, a full disk) leaves the version-12 database as it was, and the next start runs it whole.
    @Test func aMigrationInterruptedPartWayLeavesTheOldDatabaseToMigrateAgain() throws {
        try makeVersion12Database([("a1", 1_700_000_000_000, 1_700_000_000_500, 2)])
        do {
            let connection = try SQLiteConnection(path: path, mode: .readWrite(synchronous: .full))
            let thirteen = try #require(Migrations.all.first { $0.version == 13 })
            struct Interrupted: Error {}
            #expect(throws: Interrupted.self) {
                try connection.transaction {
                    try thirteen.apply(connection)
                    throw Interrupted()
                }
            }
            #expect(try Migrations.version(of: connection) == 12)
            #expect(try columns(of: "sessions", in: connection).contains("live_since"))
            #expect(try connection.integer("SELECT count(*) FROM sqlite_master WHERE name = 'session_liveness'") == 0)
            connection.close()
        }
        #expect(try SQLiteStore(path: path).loadState().sessions == [
            session("a1", lastActive: 1_700_000_000_000, liveSince: 1_700_000_000_500, failed: 2),
        ])
    }

    /// A close writes the liveness alone too: the failed-restore count with the times.
    @Test func aLivenessWriteStoresAllThreeFieldsAndLeavesTheSessionsRowAlone() throws {
        let store = try SQLiteStore(path: path)
        let stored = Fixtures.fullSession(id: "a1")
        try store.apply([.putSession(stored)])
        let rowBefore = try store.connection.text("SELECT quote(snapshot) || user_info || title FROM sessions")

        var closed = stored
        closed.lastActiveAt += 90_000
        closed.liveSince = nil
        closed.failedRestores = 3
        try store.apply([.putSessionLiveness(SessionLiveness(of: closed))])
        #expect(try store.loadState().sessions == [closed])
        #expect(try store.connection.text("SELECT quote(snapshot) || user_info || title FROM sessions") == rowBefore)
    }

    @Test func deletingASessionDeletesItsLivenessRowInTheSameTransaction() throws {
        let store = try SQLiteStore(path: path)
        try store.apply([.putSession(Fixtures.fullSession(id: "a1")), .putSession(Fixtures.bareSession(id: "b2"))])
        #expect(try store.connection.integer("SELECT count(*) FROM session_liveness") == 2)

        // A batch that fails after the delete keeps both rows.
        store.failAfterCommands = 1
        #expect(throws: SQLiteError.self) {
            try store.apply([.deleteSession(SessionID("a1")), .deleteSession(SessionID("b2"))])
        }
        #expect(try store.connection.integer("SELECT count(*) FROM session_liveness") == 2)

        try store.apply([.deleteSession(SessionID("a1"))])
        #expect(try store.connection.text("SELECT group_concat(session) FROM session_liveness") == "b2")
        #expect(try store.loadState().sessions == [Fixtures.bareSession(id: "b2")])
    }

    /// A whole put after a liveness write: the put's values win, in either order within a batch.
    @Test func aWholePutRewritesTheLivenessRowItKeepsInStep() throws {
        let store = try SQLiteStore(path: path)
        var session = Fixtures.fullSession(id: "a1")
        try store.apply([.putSession(session)])
        var live = session
        (live.lastActiveAt, live.liveSince, live.failedRestores) = (9_000, 9_000, 4)
        session.title = "saved"
        (session.lastActiveAt, session.liveSince, session.failedRestores) = (9_500, nil, 0)
        try store.apply([.putSessionLiveness(SessionLiveness(of: live)), .putSession(session)])
        #expect(try store.loadState().sessions == [session])
    }

    /// A session row without its liveness row (only a delete without foreign keys, or a hand
    /// edit, leaves one) still loads, counted live until the restart rather than idle since it
    /// was made, and the load says so.
    @Test func aSessionWithoutALivenessRowLoadsAsLiveAndIsReported() throws {
        let store = try SQLiteStore(path: path)
        let bare = SceneSession(id: SessionID("b2"), secretHash: .unmatchable, owner: Fixtures.owner, role: .window,
                                configuration: "workspace", createdAt: 1_000, lastActiveAt: 2_000)
        try store.apply([.putSession(bare)])
        try store.connection.run("DELETE FROM session_liveness")

        let (state, issues) = try store.loadStateReportingIssues()
        var expected = bare
        (expected.lastActiveAt, expected.liveSince) = (1_000, 1_000)
        #expect(state.sessions == [expected])
        #expect(issues.map(\.field) == ["liveness"])
    }

    /// A liveness write (a resume, a close) for a session whose row is missing makes it again
    /// with its values, and a restart loads the session with them; for a session not stored
    /// it writes nothing and fails nothing.
    @Test func aLivenessWriteMakesAMissingRowAgain() throws {
        do {
            let store = try SQLiteStore(path: path)
            let stored = Fixtures.fullSession(id: "a1")
            try store.apply([.putSession(stored), .putSession(Fixtures.bareSession(id: "b2"))])
            try store.connection.run("DELETE FROM session_liveness WHERE session = 'a1'")

            var resumed = stored
            (resumed.lastActiveAt, resumed.liveSince) = (70_000, 70_000)
            try store.apply([.putSessionLiveness(SessionLiveness(of: resumed))])
            #expect(try store.connection.text(
                "SELECT last_active_at || ',' || live_since || ',' || failed_restores FROM session_liveness WHERE session = 'a1'"
            ) == "70000,70000,2")

            try store.connection.run("DELETE FROM session_liveness WHERE session = 'a1'")
            var closed = resumed
            (closed.lastActiveAt, closed.liveSince, closed.failedRestores) = (80_000, nil, 2)
            try store.apply([.putSessionLiveness(SessionLiveness(of: closed)),
                             .putSessionLiveness(SessionLiveness(of: Fixtures.bareSession(id: "gone")))])
            #expect(try store.connection.integer("SELECT count(*) FROM session_liveness") == 2)
            #expect(try store.connection.integer("SELECT count(*) FROM sessions WHERE id = 'gone'") == 0)
            store.close()
        }
        let reopened = try SQLiteStore(path: path)
        let (state, issues) = try reopened.loadStateReportingIssues()
        var closed = Fixtures.fullSession(id: "a1")
        (closed.lastActiveAt, closed.liveSince, closed.failedRestores) = (80_000, nil, 2)
        #expect(state.sessions.first { $0.id == SessionID("a1") } == closed)
        #expect(issues.isEmpty)
    }

    /// A minted id (32 hex digits, held in two words, `InlineIdentifier`) is bound from its
    /// bytes without a `String`: the row it names is the one written, and no other.
    @Test func aMintedSessionIdIsBoundByItsBytes() throws {
        let store = try SQLiteStore(path: path)
        let minted = String(repeating: "0123456789abcdef", count: 2)
        let neighbour = String(repeating: "0123456789abcdef", count: 2).dropLast() + "e"
        var session = SceneSession(id: SessionID(minted), secretHash: .unmatchable, owner: Fixtures.owner, role: .window,
                                   configuration: "workspace", createdAt: 0, lastActiveAt: 0)
        let other = SceneSession(id: SessionID(String(neighbour)), secretHash: .unmatchable, owner: Fixtures.owner,
                                 role: .window, configuration: "workspace", createdAt: 0, lastActiveAt: 0)
        try store.apply([.putSession(session), .putSession(other)])
        (session.lastActiveAt, session.liveSince) = (1_800_000_000_000, 1_800_000_000_000)
        try store.apply([.putSessionLiveness(SessionLiveness(of: session))])
        #expect(try store.loadState().sessions == [other, session]) // by id: `…dee` before `…def`
    }

    /// `panes inspect` reads the liveness of a running server's latest resume.
    @Test func anInspectorReadsTheLivenessARunningServerWrote() throws {
        let server = try SQLiteStore(path: path)
        var session = Fixtures.fullSession(id: "a1")
        try server.apply([.putSession(session)])
        (session.lastActiveAt, session.liveSince) = (1_900_000_000_000, 1_900_000_000_000)
        try server.apply([.putSessionLiveness(SessionLiveness(of: session))])

        let inspector = try SQLiteStore.openReadOnly(path: path)
        #expect(try inspector.loadState().sessions == [session])
    }
}
