import Testing
package import PanesCore
@testable import PanesStorage
@testable import PanesPostgres
import PanesPostgresTestSupport

/// The stores every conformance test runs against.
package enum StoreKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case memory
    case sqlite
    /// A fresh database per test on `PANES_TEST_POSTGRES` (scripts/test sets it).
    case postgres

    package var description: String { rawValue }

    /// Every kind, less PostgreSQL when `PANES_TEST_POSTGRES=skip` says so explicitly. Unset,
    /// the PostgreSQL cases run and fail saying how to give them a server.
    package static var tested: [StoreKind] {
        TestDatabase.isSkipped ? allCases.filter { $0 != .postgres } : allCases
    }

    /// The stores that several nodes can share.
    package static var shared: [StoreKind] {
        tested.filter { $0 != .sqlite }
    }
}

/// A store under test, and the one operation that differs between kinds: reopening it, so
/// that what a test reads back is what survived, not what a cache remembered.
package final class StoreHarness {
    package let kind: StoreKind
    package private(set) var store: any Store
    private let sqliteFile: TemporaryDatabase?
    private let database: TestDatabase?

    package init(_ kind: StoreKind) throws {
        self.kind = kind
        switch kind {
        case .memory:
            sqliteFile = nil
            database = nil
            store = MemoryStore()
        case .sqlite:
            let sqliteFile = try TemporaryDatabase()
            self.sqliteFile = sqliteFile
            database = nil
            store = try SQLiteStore(path: sqliteFile.path)
        case .postgres:
            let database = try TestDatabase()
            self.database = database
            sqliteFile = nil
            store = try PostgresStore(url: database.url)
        }
    }

    /// The store as a `SharedStore` (memory and PostgreSQL).
    package var shared: any SharedStore {
        store as! any SharedStore
    }

    /// Another store on the same database, as a second node would have; nil for a memory store
    /// (the same object is the only way two hubs share one).
    package func secondNode() throws -> (any SharedStore)? {
        guard let database else { return nil }
        return try PostgresStore(url: database.url)
    }

    package func apply(_ batch: [StoreCommand]) throws {
        try store.apply(batch)
    }

    /// The state as a freshly started server would load it. A memory store cannot be
    /// reopened; it is read as is.
    package func reloaded() throws -> StoredState {
        if let sqlite = store as? SQLiteStore, let sqliteFile {
            sqlite.close()
            store = try SQLiteStore(path: sqliteFile.path)
        }
        if let postgres = store as? PostgresStore, let database {
            postgres.close()
            store = try PostgresStore(url: database.url)
        }
        var state = try store.loadState()
        // What only a shared store tracks is not what these tests compare.
        state.recordCursor = 0
        state.claims = [:]
        return state
    }

    /// A session's `secret_hash` column as the database holds it, read with SQL of its own; nil
    /// for a memory store (it keeps no text form) or a session it does not hold.
    package func storedSecretHash(of id: String) throws -> String? {
        switch kind {
        case .memory:
            return nil
        case .sqlite:
            let connection = try SQLiteConnection(path: sqliteFile!.path, mode: .readOnly)
            defer { connection.close() }
            return try connection.text("SELECT secret_hash FROM sessions WHERE id = ?1", [.text(id)])
        case .postgres:
            let connection = try PostgresConnection(url: database!.url)
            defer { connection.close() }
            let rows = try connection.query("SELECT secret_hash FROM sessions WHERE id = $1", [.text(id)])
            return rows.count > 0 ? rows.text(0, 0) : nil
        }
    }

    /// Overwrites a session's `secret_hash` column with `text`, as another build (or damage)
    /// would have left it, with SQL of its own; the memory store has no such column.
    package func writeStoredSecretHash(_ text: String, of id: String) throws {
        try update("UPDATE sessions SET secret_hash = $2 WHERE id = $1", id, text)
    }

    /// Overwrites a document snapshot's `applied` column (its `AppliedStreams`) with `text`,
    /// as another build (or damage) would have left it; the memory store has no such column.
    package func writeStoredApplied(_ text: String, of document: String) throws {
        try update("UPDATE document_snapshots SET applied = $2 WHERE document = $1", document, text)
    }

    /// Runs an UPDATE with its two text parameters (`$1`, `$2`; `?1`, `?2` for SQLite) on a
    /// connection of its own; nothing for the memory store.
    private func update(_ sql: String, _ first: String, _ second: String) throws {
        switch kind {
        case .memory:
            return
        case .sqlite:
            let connection = try SQLiteConnection(path: sqliteFile!.path, mode: .readWrite(synchronous: .full))
            defer { connection.close() }
            try connection.run(String(sql.map { $0 == "$" ? "?" : $0 }), [.text(first), .text(second)])
        case .postgres:
            let connection = try PostgresConnection(url: database!.url)
            defer { connection.close() }
            _ = try connection.query(sql, [.text(first), .text(second)])
        }
    }

    /// Makes the next batch fail after `commands` of its commands have been applied, where the
    /// store allows that; the memory store can only fail before the first.
    package func failNextBatch(afterCommands commands: Int) {
        switch store {
        case let memory as MemoryStore: memory.failNextApply = true
        case let sqlite as SQLiteStore: sqlite.failAfterCommands = commands
        case let postgres as PostgresStore: postgres.failAfterCommands = commands
        default: Issue.record("no fault injection for \(kind)")
        }
    }
}
