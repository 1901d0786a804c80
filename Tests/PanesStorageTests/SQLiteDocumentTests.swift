import Foundation
import PanesCore
import PanesSecurity
@testable import PanesStorage
import Testing

/// What only the SQLite store does with documents: the schema migration, the log's rows,
/// damaged rows.
@Suite struct SQLiteDocumentTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.file("panes.sqlite")
    }

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
        session.secretHash = Digest.sha256Hex("x") // migration 4 hashed the plain secret
        #expect(try store.loadState().sessions == [session])
        try store.apply([.createDocument(Fixtures.document(), text: "hello")])
        #expect(try store.loadState().documents == [Fixtures.document()])
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
