import Foundation
import PanesCore
@testable import PanesStorage
import PanesStorageTestSupport
import Testing

/// What only the SQLite store does: files, pragmas, migrations, read-only inspection.
@Suite struct SQLiteStoreTests {
    let database: TemporaryDatabase
    var path: String { database.path }

    init() throws { database = try TemporaryDatabase() }

    // MARK: Durability

    @Test func everythingSurvivesClosingAndReopening() throws {
        let store = try SQLiteStore(path: path)
        try store.apply([.putSession(Fixtures.fullSession(id: "a1")), .putSession(Fixtures.bareSession(id: "b2"))])
        try store.apply([.putPreference(Fixtures.adaDomain, keyPath: "theme", value: "dark", version: 3),
                         .deleteSession(SessionID("b2"))])
        let written = try store.loadState()
        store.close()

        let reopened = try SQLiteStore(path: path)
        #expect(try reopened.loadState() == written)
        #expect(written.sessions == [Fixtures.fullSession(id: "a1")])
    }

    @Test func theDatabaseUsesWriteAheadLoggingAndFullSync() throws {
        let store = try SQLiteStore(path: path)
        #expect(try store.connection.text("PRAGMA journal_mode") == "wal")
        #expect(try store.connection.integer("PRAGMA synchronous") == 2) // FULL
        #expect(try store.connection.integer("PRAGMA foreign_keys") == 1)
    }

    @Test func normalSyncCanBeChosen() throws {
        let store = try SQLiteStore(path: path, synchronous: .normal)
        #expect(try store.connection.text("PRAGMA journal_mode") == "wal")
        #expect(try store.connection.integer("PRAGMA synchronous") == 1) // NORMAL
    }

    /// `sqliteCacheKiB`: the store's page cache is capped at the setting (SQLite takes a
    /// negative `cache_size` as KiB); without one it is SQLite's own 2,000 KiB.
    @Test func thePageCacheIsCappedAtTheSetting() throws {
        let capped = try SQLiteStore(path: path, cacheKiB: Settings().sqliteCacheKiB)
        #expect(try capped.connection.integer("PRAGMA cache_size") == -512)
        capped.close()
        let unset = try SQLiteStore(path: database.directory.file("other.sqlite"))
        #expect(try unset.connection.integer("PRAGMA cache_size") == -2_000)
    }

    /// What a SIGKILL leaves behind is the files as they are now, with no close and no
    /// checkpoint: a copy of them must already hold every applied batch.
    @Test func anAppliedBatchIsInTheFilesBeforeTheStoreCloses() throws {
        let store = try SQLiteStore(path: path)
        try store.apply([.putSession(Fixtures.fullSession(id: "a1")),
                         .putPreference(Fixtures.workspaceDomain, keyPath: "motd", value: "hi", version: 1)])

        let copy = database.directory.file("copy.sqlite")
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        #expect(try SQLiteStore(path: copy).loadState() == store.loadState())
        withExtendedLifetime(store) {}
    }

    @Test func aBatchOfTenThousandCommandsIsOneTransaction() throws {
        let store = try SQLiteStore(path: path)
        let batch: [StoreCommand] = (0..<10_000).map { index in
            index.isMultiple(of: 2)
                ? .putSession(Fixtures.bareSession(id: String(format: "%05d", index)))
                : .putPreference(Fixtures.adaDomain, keyPath: "key\(index)", value: .int(Int64(index)), version: Int64(index))
        }
        // Failing on the last command leaves nothing, so all of them shared one transaction.
        store.failAfterCommands = 9_999
        #expect(throws: SQLiteError.self) { try store.apply(batch) }
        #expect(try store.loadState().contents == StoredState())

        try store.apply(batch)
        store.close()
        let state = try SQLiteStore(path: path).loadState()
        #expect(state.sessions.count == 5_000)
        #expect(state.preferences[Fixtures.adaDomain]?.values.count == 5_000)
        #expect(state.preferences[Fixtures.adaDomain]?.version == 9_999)
    }

    /// A COMMIT that returns an error did not commit, in either state SQLite documents after
    /// one (still open, as after SQLITE_BUSY; rolled back, as SQLITE_FULL or an I/O error may
    /// leave it): nothing of the batch is there, the connection is out of the transaction, and
    /// the same batch applied again is there once (a document created twice would fail).
    @Test(arguments: [SQLiteConnection.CommitFault.stillOpen, .rolledBack])
    func aBatchWhoseCommitFailsIsNotThereAndAppliesOnceWhenTriedAgain(_ fault: SQLiteConnection.CommitFault) throws {
        let store = try SQLiteStore(path: path)
        let record = RequestRecord(slot: RequestKeySlot(owner: Fixtures.owner, key: RequestKey("k")), fingerprint: "f",
                                   result: ["document": "doc_a1"], at: 1)
        let batch: [StoreCommand] = [.createDocument(Fixtures.document(), text: "hello"), .recordRequest(record),
                                     .putSession(Fixtures.bareSession())]
        store.connection.commitFault = fault
        let error = try #require(throws: SQLiteError.self) { try store.apply(batch) }
        #expect(error.sql == "COMMIT")
        #expect(!store.connection.isInTransaction)
        #expect(try store.loadState().contents == StoredState())
        try store.apply(batch)
        store.close()
        let state = try SQLiteStore(path: path).loadState()
        #expect(state.documents.count == 1 && state.sessions.count == 1 && state.requestRecords == [record])
    }

    @Test func aBatchThatFailsInsideSQLiteRollsBack() throws {
        let store = try SQLiteStore(path: path)
        try store.apply([.putSession(Fixtures.bareSession(id: "b2"))])
        let before = try store.loadState()
        // A trigger makes SQLite itself refuse the third command, after two were written.
        try store.connection.execute("""
            CREATE TEMP TRIGGER refuse BEFORE INSERT ON preferences WHEN NEW.key_path = 'poison'
            BEGIN SELECT RAISE(ABORT, 'poisoned'); END
            """)
        let batch: [StoreCommand] = [
            .putSession(Fixtures.fullSession(id: "a1")),
            .deleteSession(SessionID("b2")),
            .putPreference(Fixtures.adaDomain, keyPath: "poison", value: 1, version: 1),
        ]
        let error = try #require(throws: SQLiteError.self) { try store.apply(batch) }
        #expect(error.message.contains("poisoned"))
        #expect(error.sql?.contains("INSERT INTO preferences") == true)
        #expect(!store.connection.isInTransaction)
        store.close()

        #expect(try SQLiteStore(path: path).loadState() == before)
    }

    @Test func anEmptyUserNameIsRefusedRatherThanMergedIntoTheWorkspaceDomain() throws {
        let store = try SQLiteStore(path: path)
        let batch: [StoreCommand] = [
            .putPreference(Fixtures.workspaceDomain, keyPath: "theme", value: "corporate", version: 1),
            .putPreference(PreferenceDomain(workspace: "acme", user: ""), keyPath: "theme", value: "dark", version: 2),
        ]
        let error = try #require(throws: SQLiteError.self) { try store.apply(batch) }
        #expect(error.reason == .invalidCommand)
        #expect(try store.loadState().contents == StoredState())
    }

    // MARK: What belongs to a session

    /// Future per-session tables (document state, for one) cascade from `sessions`; putting a
    /// session again must update its row in place, not delete and re-insert it.
    @Test func updatingASessionKeepsWhatBelongsToItAndDeletingItRemovesThat() throws {
        let store = try SQLiteStore(path: path)
        try store.connection.execute("""
            CREATE TABLE session_children (
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, note TEXT NOT NULL)
            """)
        try store.apply([.putSession(Fixtures.fullSession(id: "a1")), .putSession(Fixtures.bareSession(id: "b2"))])
        try store.connection.run("INSERT INTO session_children VALUES ('a1', 'x'), ('b2', 'y')")

        var renamed = Fixtures.fullSession(id: "a1")
        renamed.title = "renamed"
        try store.apply([.putSession(renamed)])
        #expect(try store.connection.integer("SELECT count(*) FROM session_children") == 2)

        try store.apply([.deleteSession(SessionID("a1"))])
        #expect(try store.connection.text("SELECT group_concat(session_id) FROM session_children") == "b2")
    }

    /// A resume's write is its liveness alone (the two times and the failed-restore count):
    /// SQLite leaves the rest of the session as stored (its JSON columns are not encoded and
    /// bound again), and writes nothing for a session it does not hold.
    @Test func aSessionsLivenessWritesOnlyItsLiveness() throws {
        let store = try SQLiteStore(path: path)
        let stored = Fixtures.fullSession(id: "a1")
        try store.apply([.putSession(stored)])

        var attached = Fixtures.bareSession(id: "a1")
        attached.lastActiveAt = 1_800_000_000_000
        attached.liveSince = 1_800_000_000_000
        try store.apply([.putSessionLiveness(SessionLiveness(of: attached)),
                         .putSessionLiveness(SessionLiveness(of: Fixtures.bareSession(id: "nowhere")))])

        var expected = stored
        (expected.lastActiveAt, expected.liveSince, expected.failedRestores) = (1_800_000_000_000, 1_800_000_000_000, 0)
        #expect(try store.loadState().sessions == [expected])
        #expect(try store.connection.integer("SELECT count(*) FROM session_liveness") == 1)
    }

    // MARK: Migrations

    @Test func anEmptyFileIsMigratedToTheLatestSchema() throws {
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let store = try SQLiteStore(path: path)

        #expect(try Migrations.version(of: store.connection) == Migrations.latest)
        var tables: [String] = []
        try store.connection.forEachRow("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") { row in
            tables.append(row.text(at: 0) ?? "")
        }
        // sqlite_sequence is SQLite's own, for the outbox's AUTOINCREMENT.
        #expect(tables == ["deployment_secrets", "document_access", "document_operations", "document_snapshots", "document_versions", "documents",
                           "preference_domains", "preferences", "request_records", "session_liveness", "sessions", "sqlite_sequence",
                           "webhook_outbox"])
        #expect(try store.connection.integer(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'sessions_by_owner'") == 1)
    }

    @Test func aVersionFourDatabaseGainsSubtitlesAndKeepsItsSessions() throws {
        do {
            let old = try SQLiteConnection(path: path, mode: .readWrite(synchronous: .full))
            for migration in Migrations.all.prefix(4) { try migration.apply(old) }
            try old.execute("PRAGMA user_version = 4")
            try old.run("""
                INSERT INTO sessions (id, workspace, user, secret_hash, role, configuration, title, user_info,
                                      created_at, last_active_at, failed_restores)
                VALUES ('b2', 'acme', 'ada', 'x', 'window', 'workspace', '', '{}', 0, 0, 0)
                """)
            old.close()
        }
        let store = try SQLiteStore(path: path)
        #expect(try Migrations.version(of: store.connection) == Migrations.latest)
        #expect(try store.loadState().sessions == [Fixtures.bareSession(id: "b2")])
        var titled = Fixtures.bareSession(id: "b2")
        titled.subtitle = "Scratch: call Ada"
        try store.apply([.putSession(titled)])
        #expect(try SQLiteStore(path: path).loadState().sessions == [titled])
    }

    @Test func migrationsAreNumberedInIncreasingOrder() {
        // Numbers only increase; one may be missing while another branch holds it.
        #expect(zip(Migrations.all, Migrations.all.dropFirst()).allSatisfy { $0.version < $1.version })
        #expect(Migrations.latest == Migrations.all.last?.version)
    }

    @Test func reopeningDoesNotMigrateAgain() throws {
        try SQLiteStore(path: path).apply([.putSession(Fixtures.bareSession())])
        let reopened = try SQLiteStore(path: path)
        #expect(try Migrations.version(of: reopened.connection) == Migrations.latest)
        #expect(try reopened.loadState().sessions == [Fixtures.bareSession()])
    }

    @Test func aDatabaseFromANewerBuildIsRefusedAndLeftUntouched() throws {
        do {
            // A database as a future build might leave it, still in rollback-journal mode, so
            // a switch to WAL would show in the bytes.
            let future = try SQLiteConnection(path: path, mode: .readWrite(synchronous: .full))
            try future.execute("CREATE TABLE future (x); PRAGMA user_version = 99")
            future.close()
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

        let error = try #require(throws: SQLiteError.self) { try SQLiteStore(path: path) }
        #expect(error.reason == .schemaTooNew(found: 99, known: Migrations.latest))
        #expect(error.description.contains("99"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftUntouched() throws {
        let garbage = Data("this is not a database, it is a shopping list: eggs, milk".utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: garbage))

        let error = try #require(throws: SQLiteError.self) { try SQLiteStore(path: path) }
        #expect(error.primaryResultCode == 26) // SQLITE_NOTADB
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    // MARK: Read-only inspection

    @Test func readOnlyOpenDoesNotCreateAMissingFile() throws {
        let error = try #require(throws: SQLiteError.self) { try SQLiteStore.openReadOnly(path: path) }
        #expect(error.reason == .missingDatabase)
        #expect(error.description.contains(path))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func readOnlyOpenRefusesWrites() throws {
        try SQLiteStore(path: path).apply([.putSession(Fixtures.bareSession())])
        let inspector = try SQLiteStore.openReadOnly(path: path)
        #expect(inspector.isReadOnly)

        let refused = try #require(throws: SQLiteError.self) {
            try inspector.apply([.deleteSession(Fixtures.bareSession().id)])
        }
        #expect(refused.reason == .readOnly)
        // Even SQL that bypasses the store is refused by SQLite itself.
        let direct = try #require(throws: SQLiteError.self) {
            try inspector.connection.run("DELETE FROM sessions")
        }
        #expect(direct.primaryResultCode == 8) // SQLITE_READONLY
        #expect(try inspector.loadState().sessions == [Fixtures.bareSession()])
    }

    @Test func readOnlyOpenReadsWhatARunningServerCommitted() throws {
        let server = try SQLiteStore(path: path)
        try server.apply([.putSession(Fixtures.fullSession(id: "a1"))])
        let inspector = try SQLiteStore.openReadOnly(path: path)
        #expect(try inspector.loadState() == server.loadState())

        try server.apply([.putPreference(Fixtures.adaDomain, keyPath: "theme", value: "dark", version: 1)])
        #expect(try inspector.loadState() == server.loadState())
    }

    @Test func readOnlyOpenOfAClosedDatabaseLeavesItUnchanged() throws {
        let store = try SQLiteStore(path: path)
        try store.apply([.putSession(Fixtures.fullSession(id: "a1"))])
        store.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

        let inspector = try SQLiteStore.openReadOnly(path: path)
        #expect(try inspector.loadState().sessions == [Fixtures.fullSession(id: "a1")])
        inspector.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func readOnlyOpenRefusesADatabaseWithoutTheSchema() throws {
        try SQLiteConnection(path: path, mode: .readWrite(synchronous: .full)).execute("CREATE TABLE other (x)")

        let error = try #require(throws: SQLiteError.self) { try SQLiteStore.openReadOnly(path: path) }
        #expect(error.reason == .schemaTooOld(found: 0, known: Migrations.latest))
    }

    // MARK: Damaged rows

    @Test func unreadableStoredFieldsAreLeftOutAndReported() throws {
        let store = try SQLiteStore(path: path)
        try store.apply([
            .putSession(Fixtures.fullSession(id: "a1")), .putSession(Fixtures.fullSession(id: "b2")),
            .putPreference(Fixtures.adaDomain, keyPath: "good", value: 1, version: 1),
            .putPreference(Fixtures.adaDomain, keyPath: "bad", value: 2, version: 2),
        ])
        try store.connection.run("""
            UPDATE sessions SET restoration_activity = '{"activityType": "panes.document"', user_info = '[1]',
                                snapshot = 'nope', role = 'hologram' WHERE id = 'a1'
            """)
        try store.connection.run("UPDATE sessions SET restoration_meta = '{}' WHERE id = 'b2'")
        try store.connection.run("UPDATE preferences SET value = '{' WHERE key_path = 'bad'")

        let (state, issues) = try store.loadStateReportingIssues()
        var damaged = Fixtures.fullSession(id: "a1")
        damaged.restoration = nil
        damaged.userInfo = [:]
        damaged.snapshot = nil
        damaged.role = .window
        var noMetadata = Fixtures.fullSession(id: "b2")
        noMetadata.restoration = nil
        #expect(state.sessions == [damaged, noMetadata])
        #expect(state.preferences[Fixtures.adaDomain] ==
            StoredPreferences(version: 2, values: ["good": VersionedValue(value: 1, version: 1)]))
        #expect(Set(issues.map { "\($0.record) \($0.field)" }) == [
            "session a1 role", "session a1 user_info", "session a1 snapshot",
            "session a1 restoration_activity", "session a1 restoration",
            "session b2 restoration", "preference user:ada@acme bad value",
        ])
    }
}

/// What the runtime asks of a store's kind, through `Store.shared` rather than its type.
@Suite struct StoreSharedSideTests {
    @Test func onlyStoresSeveralNodesShareHaveASharedSide() throws {
        let database = try TemporaryDatabase()
        let sqlite = try SQLiteStore(path: database.path)
        #expect(sqlite.shared == nil)
        let memory = MemoryStore()
        #expect(memory.shared === memory)
        let asStore: any Store = memory
        #expect(asStore.shared != nil, "seen as any Store, a memory store still offers its shared side")
    }
}
