import Foundation
import PanesCore
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresMigrationsTests {
    @Test func twoNodesStartingAtOnceMigrateOnceAndBothStart() throws {
        let database = try TestDatabase()
        let results = ResultBox()
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let connection = try database.connect()
                    try PostgresMigrations.migrate(connection)
                    results.append(nil)
                } catch {
                    results.append("\(error)")
                }
            }
        }
        group.wait()
        #expect(results.values == [nil, nil, nil, nil])
        let connection = try database.connect()
        // Once each (numbers only increase, and one may be missing while another branch holds it).
        #expect(try connection.integer("SELECT count(*) FROM schema_migrations") == Int64(PostgresMigrations.all.count))
        #expect(try PostgresMigrations.version(connection) == PostgresMigrations.latest)
    }

    @Test func aDatabaseOfTheLastBuildIsMigratedWithItsDocumentsIntact() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        // What the build before migration 4 left: the log's foreign key, a document and its log.
        try PostgresMigrations.migrate(connection, through: 3)
        try connection.execute("""
            INSERT INTO documents (id, workspace, title, kind, created_at, created_by, modified_at, revision, length)
            VALUES ('doc_1', 'acme', 't', 'text', 0, 'ada', 0, 2, 2);
            INSERT INTO document_snapshots (document, revision, text) VALUES ('doc_1', 0, ''::bytea);
            INSERT INTO document_operations (document, revision, operation, op_id, author_scene, author_user,
                                             author_name, created_at)
            VALUES ('doc_1', 1, '["a"]', 'op1', 's', 'ada', 'Ada', 0), ('doc_1', 2, '[1,"b"]', 'op2', 's', 'ada', 'Ada', 0);
            """)
        let keys = "SELECT count(*) FROM pg_constraint WHERE conrelid = 'document_operations'::regclass AND contype = 'f'"
        #expect(try connection.integer(keys) == 1)
        let store = try PostgresStore(url: database.url)
        #expect(try PostgresMigrations.version(connection) == PostgresMigrations.latest)
        #expect(try connection.integer(keys) == 0)
        let document = try store.loadDocument(DocumentID("doc_1"), retention: 100)
        #expect(document?.snapshotText == "" && document?.operations.map(\.opId) == ["op1", "op2"])
        _ = try store.apply([.persist([.deleteDocument(DocumentID("doc_1"))])])
        #expect(try connection.integer("SELECT count(*) FROM document_operations") == 0)
    }

    @Test func aDatabaseFromANewerBuildIsRefusedAndLeftAsItWas() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        try PostgresMigrations.migrate(connection)
        try connection.query("INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')",
                             [.int(PostgresMigrations.latest + 1)])
        #expect(throws: PostgresError.self) { try PostgresStore(url: database.url) }
        #expect(try PostgresMigrations.version(connection) == PostgresMigrations.latest + 1)
    }
}

/// Collects results from several threads.
final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String?] = []

    func append(_ value: String?) {
        lock.lock()
        collected.append(value)
        lock.unlock()
    }

    var values: [String?] {
        lock.lock()
        defer { lock.unlock() }
        return collected
    }
}
