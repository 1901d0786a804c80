import Foundation
import PanesCore
@testable import PanesStorage
import PanesStorageTestSupport
import Testing

/// Liveness writes that come in a row are written a chunk at a time (`LivenessRun`): what is
/// stored must be what writing them one by one stores, whatever the run's length, repeats,
/// missing rows and the commands around it.
@Suite struct LivenessRunTests {
    let database: TemporaryDatabase
    var path: String { database.path }

    init() throws { database = try TemporaryDatabase() }

    private func sessions(_ count: Int) -> [SceneSession] {
        (0..<count).map { index in
            SceneSession(id: SessionID(String(format: "s%03d", index)), secretHash: .unmatchable, owner: Fixtures.owner,
                         role: .window, configuration: "workspace", createdAt: 1_000, lastActiveAt: 2_000,
                         failedRestores: index % 3)
        }
    }

    private func resumed(_ session: SceneSession, at time: Millis) -> SceneSession {
        var session = session
        (session.lastActiveAt, session.liveSince) = (time, time)
        return session
    }

    private func rows(_ store: SQLiteStore) throws -> [String] {
        var rows: [String] = []
        try store.connection.forEachRow("""
            SELECT session || ',' || last_active_at || ',' || coalesce(live_since, '-') || ',' || failed_restores
            FROM session_liveness ORDER BY session
            """) { rows.append($0.text(at: 0) ?? "") }
        return rows
    }

    /// 150 windows back in one commit (chunks of 64, 64, 16 and 4, then two alone): each row
    /// holds its own window's values, and a restart loads them all.
    @Test func aStormsCommitStoresEveryWindowsOwnValues() throws {
        let stored = sessions(150)
        do {
            let store = try SQLiteStore(path: path)
            try store.apply(stored.map { .putSession($0) })
            let back = stored.enumerated().map { resumed($1, at: 10_000 + Millis($0)) }
            try store.apply(back.map { .persist([.putSessionLiveness(SessionLiveness(of: $0))]) })
            #expect(try rows(store) == back.map { "\($0.id),\($0.lastActiveAt),\($0.lastActiveAt),\($0.failedRestores)" })
            store.close()
        }
        let expected = stored.enumerated().map { resumed($1, at: 10_000 + Millis($0)) }
        #expect(try SQLiteStore(path: path).loadState().sessions == expected)
    }

    /// A window that resumes and closes within one commit: its later write wins, as it would
    /// one by one, wherever the two fall in the run. Two rows matched for one session must not
    /// hide a lost row of the same chunk either (s007's, made again).
    @Test func aSessionWrittenTwiceInARunKeepsItsLaterValues() throws {
        let stored = sessions(70)
        let store = try SQLiteStore(path: path)
        try store.apply(stored.map { .putSession($0) })
        try store.connection.run("DELETE FROM session_liveness WHERE session = 's007'")
        var writes = stored.map { SessionLiveness(of: resumed($0, at: 50_000)) }
        var closed = SessionLiveness(of: stored[3])
        (closed.lastActiveAt, closed.liveSince, closed.failedRestores) = (60_000, nil, 7)
        writes.insert(closed, at: 40)                 // stored[3] again, in the same chunk of 64
        var reopened = SessionLiveness(of: stored[65])
        (reopened.lastActiveAt, reopened.liveSince) = (70_000, 70_000)
        writes.append(reopened)                       // stored[65] again, after the chunk
        try store.apply([.persist(writes.map { .putSessionLiveness($0) })])

        let loaded = try store.loadState().sessions
        #expect(loaded[3].lastActiveAt == 60_000 && loaded[3].liveSince == nil && loaded[3].failedRestores == 7)
        #expect(loaded[65].lastActiveAt == 70_000 && loaded[65].liveSince == 70_000)
        #expect(loaded[4].lastActiveAt == 50_000 && loaded[64].liveSince == 50_000)
        #expect(try store.connection.integer("SELECT last_active_at FROM session_liveness WHERE session = 's007'") == 50_000)
    }

    /// A chunk with a lost row (a hand edit) and a session not stored: the lost row is made
    /// again with its values, the unknown session writes nothing, and every other row is written.
    @Test func aChunkWithAMissingRowAndAnUnknownSessionWritesWhatOneByOneWould() throws {
        let stored = sessions(64)
        let store = try SQLiteStore(path: path)
        try store.apply(stored.map { .putSession($0) })
        try store.connection.run("DELETE FROM session_liveness WHERE session = 's010'")
        var writes = stored.map { SessionLiveness(of: resumed($0, at: 80_000)) }
        writes[20] = SessionLiveness(id: SessionID("unknown"), lastActiveAt: 1, liveSince: 1, failedRestores: 0)
        try store.apply([.persist(writes.map { .putSessionLiveness($0) })])

        // s020's own write was replaced by the unknown session's: its row is as it was.
        let expected = stored.map { session in
            session.id == SessionID("s020") ? "s020,2000,-,2" : "\(session.id),80000,80000,\(session.failedRestores)"
        }
        #expect(try rows(store) == expected)
    }

    /// Other commands between liveness writes keep their place: a delete after a resume
    /// removes the row, a resume after the delete writes nothing, a whole put after a
    /// liveness write wins over it.
    @Test func commandsAroundARunKeepTheirOrder() throws {
        let stored = sessions(10)
        let store = try SQLiteStore(path: path)
        try store.apply(stored.map { .putSession($0) })
        var saved = stored[5]
        saved.title = "saved"
        (saved.lastActiveAt, saved.liveSince) = (95_000, nil)
        try store.apply([
            .persist(stored.prefix(5).map { .putSessionLiveness(SessionLiveness(of: resumed($0, at: 90_000))) }),
            .persist([.deleteSession(stored[2].id)]),
            .persist([.putSessionLiveness(SessionLiveness(of: resumed(stored[2], at: 91_000))),
                      .putSessionLiveness(SessionLiveness(of: resumed(stored[5], at: 91_000)))]),
            .persist([.putSession(saved)]),
        ])
        let loaded = try store.loadState().sessions
        #expect(!loaded.contains { $0.id == stored[2].id })
        #expect(loaded.first { $0.id == stored[5].id } == saved)
        #expect(loaded.first { $0.id == stored[4].id }?.lastActiveAt == 90_000)
    }

    /// A transaction that fails in the middle of a run keeps none of it.
    @Test func aFailureInARunKeepsNoneOfIt() throws {
        let stored = sessions(80)
        let store = try SQLiteStore(path: path)
        try store.apply(stored.map { .putSession($0) })
        let before = try rows(store)
        store.failAfterCommands = 70
        #expect(throws: SQLiteError.self) {
            try store.apply(stored.map { .persist([.putSessionLiveness(SessionLiveness(of: resumed($0, at: 99_000)))]) })
        }
        #expect(try rows(store) == before)
    }

    @Test func theChunkStatementBindsFourParametersASession() {
        let sql = LivenessRun.updateSQL(sessions: 2)
        #expect(sql.contains("(?1, ?2, ?3, ?4), (?5, ?6, ?7, ?8)"))
        #expect(LivenessRun.chunkSizes.first == LivenessRun.capacity)
    }
}
