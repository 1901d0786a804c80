import Foundation
import PanesCore
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

/// A document's log in PostgreSQL without a foreign key (migration 4): pruned from where the
/// last prune stopped, deleted with its document, never left behind.
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresDocumentLogTests {
    static let id = DocumentID("doc_1")

    static func record() -> DocumentRecord {
        DocumentRecord(id: id, workspace: "acme", title: "t", createdAt: 0, createdBy: "ada", modifiedAt: 0,
                       revision: 0, length: 0)
    }

    /// Operation `revision`, typing one "x" at the end of what the earlier ones typed.
    static func appended(_ revision: Int64) -> StoreCommand {
        var operation = TextOperation()
        operation.retain(Int(revision) - 1)
        operation.insert("x")
        return .appendOperation(id, StoredOperation(revision: revision, operation: operation, opId: "op\(revision)",
                                                    author: DocumentAuthor(scene: "s", user: "ada", name: "Ada"),
                                                    createdAt: revision), length: Int(revision))
    }

    static func append(_ revisions: ClosedRange<Int64>, to store: PostgresStore) throws {
        try store.apply(.persist(revisions.map(appended)))
    }

    static func snapshot(at revision: Int64, keepFrom: Int64) -> StoreCommand {
        .snapshotDocument(id, revision: revision, text: Rope(String(repeating: "x", count: Int(revision))),
                          keepFrom: keepFrom)
    }

    /// A row of doc_1's log written past the store, as another node's transaction or a stray
    /// row would be.
    static func logDirectly(revision: Int64, operation: String, opId: String, on connection: PostgresConnection) throws {
        try connection.query("""
            INSERT INTO document_operations (document, revision, operation, op_id, author_scene, author_user,
                                             author_name, created_at)
            VALUES ($1, $2, $3, $4, 's', 'u', 'n', 0)
            """, [.text(id.rawValue), .int(revision), .text(operation), .text(opId)])
    }

    /// The revisions the log holds, whatever the store would read.
    static func logged(_ database: TestDatabase) throws -> [Int64] {
        let rows = try database.connect().query("SELECT revision FROM document_operations ORDER BY revision")
        return (0..<rows.count).map { rows.int64($0, 0) }
    }

    @Test func theLogHasNoForeignKeyButAnAppendToAMissingDocumentStillFails() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let keys = try database.connect().integer("""
            SELECT count(*) FROM pg_constraint WHERE conrelid = 'document_operations'::regclass AND contype = 'f'
            """)
        #expect(keys == 0)
        #expect(throws: PostgresError.self) { try Self.append(1...2, to: store) }
        #expect(try Self.logged(database).isEmpty)
    }

    @Test func eachPruneStartsWhereTheLastStoppedAndEveryNodeLeavesTheSameLog() throws {
        let database = try TestDatabase()
        let nodes = [try PostgresStore(url: database.url), try PostgresStore(url: database.url)]
        try nodes[0].apply([.createDocument(Self.record(), text: "")])
        // Two nodes taking turns at snapshots, as they do by revision.
        for round in Int64(1)...6 {
            let node = nodes[Int(round % 2)]
            try Self.append((round - 1) * 10 + 1...round * 10, to: node)
            try node.apply(.persist([Self.snapshot(at: round * 10, keepFrom: round * 10 - 4)]))
            #expect(try Self.logged(database) == Array(round * 10 - 4...round * 10), "round \(round)")
        }
        #expect(nodes[0].prunedBelow[Self.id] == 56)
        #expect(nodes[1].prunedBelow[Self.id] == 46)
        // A node that starts afresh knows nothing of earlier prunes: it prunes from the start.
        let restarted = try PostgresStore(url: database.url)
        try Self.logDirectly(revision: 3, operation: "[1]", opId: "stray", on: database.connect())
        try Self.append(61...70, to: restarted)
        try restarted.apply(.persist([Self.snapshot(at: 70, keepFrom: 66)]))
        #expect(try Self.logged(database) == Array(66...70))
        #expect(restarted.prunedBelow[Self.id] == 66)
    }

    @Test func aPruneThatDidNotCommitIsNotTakenForDone() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        try store.apply([.createDocument(Self.record(), text: "")])
        try Self.append(1...20, to: store)
        store.failAfterCommands = 1
        #expect(throws: PostgresError.self) {
            try store.apply(.persist([Self.snapshot(at: 20, keepFrom: 15), Self.appended(21)]))
        }
        #expect(store.prunedBelow[Self.id] == nil)
        #expect(try Self.logged(database) == Array(1...20))
        try store.apply(.persist([Self.snapshot(at: 20, keepFrom: 12)]))
        #expect(try Self.logged(database) == Array(12...20))
    }

    @Test func aDeletionWaitsForAnAppendUnderWayAndLeavesNoLogBehind() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        try store.apply([.createDocument(Self.record(), text: "")])
        try Self.append(1...3, to: store)
        // Another node's commit under way: it holds the document's lock and has logged an
        // operation it has not committed yet.
        let other = try database.connect()
        try other.execute("BEGIN")
        try other.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                        [.text(Channel.document(Self.id).description)])
        try Self.logDirectly(revision: 4, operation: #"[3,"x"]"#, opId: "op4", on: other)
        let deleted = DispatchSemaphore(value: 0)
        let failure = ResultBox()
        Thread.detachNewThread {
            do {
                try store.apply(.persist([.deleteDocument(Self.id)]))
            } catch {
                failure.append("\(error)")
            }
            deleted.signal()
        }
        // Wait until the deletion waits for the lock (polled from the database, not timed).
        let watcher = try database.connect()
        var waiting = false
        for _ in 0..<500 where !waiting {
            waiting = try watcher.integer("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted") == 1
            if !waiting { usleep(10_000) }
        }
        #expect(waiting, "the deletion did not wait for the document's lock")
        try other.execute("COMMIT")
        deleted.wait()
        #expect(failure.values.isEmpty)
        #expect(try Self.logged(database).isEmpty)
        #expect(try store.loadState().documents.isEmpty)
    }
}

extension PostgresStore {
    fileprivate func apply(_ write: StoreWrite) throws {
        _ = try apply([write])
    }
}
