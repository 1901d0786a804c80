import Foundation
import PanesCore
import PanesSecurity
@testable import PanesStorage
import PanesStorageTestSupport
import Testing

/// What only the SQLite store does with documents: the schema migration, the log's rows,
/// damaged rows.
@Suite struct SQLiteDocumentTests {
    let database: TemporaryDatabase
    var path: String { database.path }

    init() throws { database = try TemporaryDatabase() }

    @Test func aVersionOneDatabaseGainsTheDocumentTablesAndKeepsItsSessions() throws {
        do {
            let old = try SQLiteConnection(path: path, mode: .readWrite(synchronous: .full))
            try Migrations.all[0].apply(old)
            try old.execute("PRAGMA user_version = 1")
            try old.run("""
                INSERT INTO sessions (id, workspace, user, secret, role, configuration, title, user_info,
                                      created_at, last_active_at, failed_restores)
                VALUES ('b2', 'acme', 'ada', 'x', 'window', 'workspace', '', '{}', 0, 0, 0)
                """)
            old.close()
        }
        let store = try SQLiteStore(path: path)
        #expect(try Migrations.version(of: store.connection) == Migrations.latest)
        var session = Fixtures.bareSession(id: "b2")
        session.secretHash = Digest.secretHash("x") // migration 4 hashed the plain secret
        #expect(try store.loadState().sessions == [session])
        try store.apply([.createDocument(Fixtures.document(), text: "hello")])
        #expect(try store.loadState().documents == [Fixtures.document()])
    }

    @Test func aVersionTwoDatabaseKeepsItsDocumentsWithTheirSnapshotsInATableOfTheirOwn() throws {
        do {
            let old = try SQLiteConnection(path: path, mode: .readWrite(synchronous: .full))
            try Migrations.all[0].apply(old)
            try Migrations.all[1].apply(old)
            try old.execute("PRAGMA user_version = 2")
            try old.run("""
                INSERT INTO documents (id, workspace, title, kind, created_at, created_by, modified_at, revision, length,
                                       snapshot_revision, snapshot_text)
                VALUES ('doc_a1', 'acme', 'Notes', 'text', 0, 'ada', 0, 2, 7, 1, 'héllo😀')
                """)
            try old.run("""
                INSERT INTO document_operations (document, revision, operation, op_id, author_scene, author_user,
                                                 author_name, created_at)
                VALUES ('doc_a1', 1, '["héllo😀"]', 'a:1', 's', 'ada', 'Ada', 0),
                       ('doc_a1', 2, '[7]', 'a:2', 's', 'ada', 'Ada', 0)
                """)
            old.close()
        }
        let store = try SQLiteStore(path: path)
        let stored = try #require(try store.loadDocument(DocumentID("doc_a1"), retention: 10))
        #expect(stored.snapshotRevision == 1)
        #expect(stored.snapshotText == "héllo😀")
        #expect(stored.operations.map(\.revision) == [1, 2])
        #expect(stored.record.revision == 2 && stored.record.length == 7)
        let textColumns = try store.connection.integer(
            "SELECT count(*) FROM pragma_table_info('documents') WHERE name LIKE 'snapshot%'")
        #expect(textColumns == 0)
    }

    /// The cost of an edit must not grow with the document: appending an operation writes the
    /// log row and the document's small row, never the snapshot's text.
    @Test func appendingAnOperationLeavesTheSnapshotAlone() throws {
        let store = try SQLiteStore(path: path)
        let id = DocumentID("doc_a1")
        try store.apply([.createDocument(Fixtures.document(), text: String(repeating: "x", count: 100_000))])
        try store.connection.execute("""
            CREATE TEMP TABLE touched (revision INTEGER);
            CREATE TEMP TRIGGER snapshot_written AFTER UPDATE ON main.document_snapshots
            BEGIN INSERT INTO touched VALUES (new.revision); END;
            """)
        try store.apply([.appendOperation(id, Fixtures.appended("y", at: 1, after: 100_000), length: 100_001)])
        #expect(try store.connection.integer("SELECT count(*) FROM touched") == 0)
        try store.apply([.snapshotDocument(id, revision: 1, text: Rope(String(repeating: "x", count: 100_000) + "y"),
                                           keepFrom: 1)])
        #expect(try store.connection.integer("SELECT count(*) FROM touched") == 1)
        #expect(try store.loadDocument(id, retention: 0)?.snapshotText.count == 100_001)
    }

    @Test func theLogHoldsOneRowPerOperationAndDeletingTheDocumentCascades() throws {
        let store = try SQLiteStore(path: path)
        let id = DocumentID("doc_a1")
        try store.apply([.createDocument(Fixtures.document(), text: ""),
                         .appendOperation(id, Fixtures.appended("x", at: 1, after: 0), length: 1),
                         .appendOperation(id, Fixtures.appended("y", at: 2, after: 1), length: 2)])
        #expect(try store.connection.integer("SELECT count(*) FROM document_operations") == 2)
        #expect(try store.connection.text("SELECT operation FROM document_operations WHERE revision = 2") == #"[1,"y"]"#)
        try store.apply([.deleteDocument(id)])
        #expect(try store.connection.integer("SELECT count(*) FROM document_operations") == 0)
    }

    @Test func aDamagedLoggedOperationRefusesTheLoadNamingIt() throws {
        let store = try SQLiteStore(path: path)
        let id = DocumentID("doc_a1")
        try store.apply([.createDocument(Fixtures.document(), text: ""),
                         .appendOperation(id, Fixtures.appended("x", at: 1, after: 0), length: 1)])
        try store.connection.run("UPDATE document_operations SET operation = '[0]' WHERE revision = 1")
        let error = try #require(throws: DocumentLoadError.self) { try store.loadDocument(id, retention: 10) }
        #expect(error.revision == 1)
        #expect(error.description.contains("doc_a1"))
        // The rest of the state still loads.
        #expect(try store.loadState().documents.count == 1)
    }

    @Test func aRecordCarriesNoTextWhichComesOnlyWithTheDocument() throws {
        let store = try SQLiteStore(path: path)
        try store.apply([.createDocument(Fixtures.document(length: 100_000), text: String(repeating: "a", count: 100_000))])
        // The record carries no text at all; the text comes only with loadDocument.
        #expect(try store.loadState().documents == [Fixtures.document(length: 100_000)])
        #expect(try store.loadDocument(DocumentID("doc_a1"), retention: 0)?.snapshotText.count == 100_000)
    }
}
