import Foundation
import PanesCore
import PanesSecurity
@testable import PanesStorage
import PanesStorageTestSupport
import Testing

/// What the SQLite files keep (issue 13, item 2): private modes, deleted rows overwritten, the
/// log truncated at checkpoints, and secrets from older databases hashed in place.
@Suite struct SQLiteDataAtRestTests {
    let database: TemporaryDatabase
    var path: String { database.path }

    init() throws { database = try TemporaryDatabase() }

    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    func size(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    /// Whether `text` occurs, as UTF-8, in the database file or its -wal or -shm file.
    func filesContain(_ text: String) throws -> Bool {
        let needle = Data(text.utf8)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            if try Data(contentsOf: URL(fileURLWithPath: file)).range(of: needle) != nil { return true }
        }
        return false
    }

    @Test func theDatabaseLogAndIndexFilesAreReadableByTheirOwnerOnly() throws {
        // Even with a permissive umask, and for files that existed with a looser mode.
        let previous = umask(0o022)
        defer { umask(previous) }
        #expect(FileManager.default.createFile(atPath: path + "-shm", contents: nil, attributes: [.posixPermissions: 0o644]))
        let store = try SQLiteStore(path: path)
        try store.apply([.putSession(Fixtures.bareSession())])
        for file in [path, path + "-wal", path + "-shm"] {
            #expect(try mode(file) == 0o600, "\(file)")
        }
    }

    @Test func secureDeleteIsOn() throws {
        let store = try SQLiteStore(path: path)
        #expect(try store.connection.integer("PRAGMA secure_delete") == 1)
    }

    @Test func aCheckpointTruncatesTheLog() throws {
        let store = try SQLiteStore(path: path)
        try store.apply([.putSession(Fixtures.fullSession())])
        #expect(try size(path + "-wal") > 0)
        try store.checkpoint()
        #expect(try size(path + "-wal") == 0)
        #expect(try store.loadState().sessions == [Fixtures.fullSession()])
    }

    @Test func aPeriodicCheckpointDoesNotWaitForAReaderAndTheNextOneTruncates() throws {
        let store = try SQLiteStore(path: path)
        try store.apply([.putSession(Fixtures.bareSession(id: "s1"))])
        // An inspector in the middle of a read holds an older snapshot of the log.
        let inspector = try SQLiteStore.openReadOnly(path: path)
        try inspector.connection.run("BEGIN")
        #expect(try inspector.connection.integer("SELECT count(*) FROM sessions") == 1)
        try store.apply([.putSession(Fixtures.bareSession(id: "s2"))])

        #expect(try store.connection.checkpointTruncatingLog(wait: false) == false, "held back, not waited for")
        try store.checkpoint()
        #expect(try size(path + "-wal") > 0)

        try inspector.connection.run("COMMIT")
        try store.checkpoint()
        #expect(try size(path + "-wal") == 0)
    }

    @Test func deletedSessionsAndDocumentsLeaveNoBytesBehind() throws {
        var session = Fixtures.bareSession(id: "doomed")
        session.userInfo = ["note": "userinfo-marker-5f1c9a"]
        session.secretHash = Digest.secretHash("secret-marker-0d7e")
        let document = Fixtures.document(id: "doc_doomed")
        let text = "document-text-marker-8b2e " + String(repeating: "long enough to need an overflow page. ", count: 200)
        let markers = ["userinfo-marker-5f1c9a", session.secretHash.hex, "document-text-marker-8b2e"]

        let store = try SQLiteStore(path: path)
        try store.apply([.putSession(session), .putSession(Fixtures.fullSession(id: "kept")),
                         .createDocument(document, text: text)])
        try store.apply([.appendOperation(document.id, Fixtures.appended(" op-marker-77aa", at: 1, after: text.unicodeScalars.count),
                                          length: text.unicodeScalars.count + 15)])
        try store.checkpoint()
        // The search can find them: they are in the database file now.
        for marker in markers + ["op-marker-77aa"] { #expect(try filesContain(marker), "\(marker) was written") }

        try store.apply([.deleteSession(session.id), .deleteDocument(document.id)])
        store.close()
        for marker in markers + ["op-marker-77aa"] { #expect(try !filesContain(marker), "\(marker) is still on disk") }
        #expect(try SQLiteStore(path: path).loadState().sessions.map(\.id) == [SessionID("kept")])
    }

    @Test func migratingAnOlderDatabaseHashesItsPlainSecretsAndLeavesNoCopy() throws {
        // A database as builds before schema 3 left it: plain secrets in `sessions.secret`.
        do {
            let old = try SQLiteConnection(path: path, mode: .readWrite(synchronous: .full))
            try old.enableWriteAheadLog()
            for migration in Migrations.all.prefix(2) { try migration.apply(old) }
            try old.execute("PRAGMA user_version = 2")
            for (id, secret) in [("s1", "plain-secret-one-4c1d"), ("s2", "plain-secret-two-93be")] {
                try old.run("""
                    INSERT INTO sessions (id, workspace, user, secret, role, configuration, title, user_info,
                                          created_at, last_active_at, failed_restores)
                    VALUES (?1, 'acme', 'ada', ?2, 'window', 'workspace', '', '{}', 0, 0, 0)
                    """, [.text(id), .text(secret)])
            }
            old.close()
        }
        #expect(try filesContain("plain-secret-one-4c1d"), "the old database holds the plain secret")

        let store = try SQLiteStore(path: path)
        let sessions = try store.loadState().sessions
        #expect(sessions.map(\.secretHash) == [Digest.secretHash("plain-secret-one-4c1d"), Digest.secretHash("plain-secret-two-93be")])
        #expect(try !filesContain("plain-secret-one-4c1d") && !filesContain("plain-secret-two-93be"))
        store.close()
        #expect(try !filesContain("plain-secret-one-4c1d") && !filesContain("plain-secret-two-93be"))
    }
}
