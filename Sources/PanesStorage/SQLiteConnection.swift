// Threading: a connection belongs to the store thread. It is opened in multi-thread mode
// (SQLITE_OPEN_NOMUTEX), so SQLite takes no locks of its own and the connection must never be
// used by two threads at once; it is created, handed to the store thread once at start-up,
// and used and closed only there.
internal import CSQLite

/// One `sqlite3*` and its statement cache.
///
/// `@unchecked Sendable` because the store hands it to the store thread once and only that
/// thread touches it afterwards; nothing here is safe for concurrent use, and nothing needs to be.
final class SQLiteConnection: @unchecked Sendable {
    enum Mode: Sendable, Equatable {
        /// Creates the file if missing; `synchronous` decides how hard a commit is pushed to disk.
        case readWrite(synchronous: SQLiteSynchronous)
        /// Never creates, writes or checkpoints the file: for inspection.
        case readOnly
    }

    let path: String
    let mode: Mode
    let busyTimeoutMs: Int32
    private var handle: OpaquePointer?
    /// Prepared once per SQL text: the store runs the same few statements thousands of times.
    private var statements: [StatementKey: OpaquePointer] = [:]

    /// A statement's SQL as the cache's key. Hashed by its length and first 64 bytes only:
    /// the statements differ early, and hashing all of an 800-byte upsert at every use cost a
    /// fifth as much as running it. Equality is still the whole text (and the same static
    /// string compares equal at once).
    struct StatementKey: Hashable {
        let sql: String

        func hash(into hasher: inout Hasher) {
            hasher.combine(sql.utf8.count)
            let hashed = sql.utf8.withContiguousStorageIfAvailable {
                hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: $0.prefix(64))))
            }
            if hashed == nil { for byte in sql.utf8.prefix(64) { hasher.combine(byte) } }
        }
    }

    /// Turns SQLite's memory statistics off before the first connection opens (Swift runs this
    /// once, whichever thread gets here first): each allocation SQLite makes then skips a global
    /// mutex and two counters, about 250 instructions each, some 3,000 of a resume's liveness
    /// UPDATE (the store thread's share of a resume went 21,200 → 18,200;
    /// `psq_disable_memory_statistics`). False when SQLite was initialised before, by other code
    /// in the process: everything works the same, only slower.
    private static let memoryStatisticsOff: Bool = psq_disable_memory_statistics() == SQLITE_OK

    /// Opens the database and applies the per-connection settings. The journal mode, which is
    /// written into the file, is left to `enableWriteAheadLog()` so a caller can first check
    /// that it may touch the file at all.
    /// - Parameter busyTimeoutMs: how long to wait for another connection's write lock.
    init(path: String, mode: Mode, busyTimeoutMs: Int32 = 5_000) throws(SQLiteError) {
        _ = Self.memoryStatisticsOff
        self.path = path
        self.mode = mode
        self.busyTimeoutMs = busyTimeoutMs
        let flags = switch mode {
        case .readWrite: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        case .readOnly: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
        }
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(.sqlite(resultCode: code), message, path: path)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMs)
        do throws(SQLiteError) {
            try execute("PRAGMA foreign_keys=ON")
            switch mode {
            case .readWrite(let synchronous):
                try FilePermissions.makePrivate(databaseAt: path)
                // Deleted rows are overwritten with zeros, not just unlinked: destroyed sessions
                // and deleted documents must not stay readable in the file.
                try execute("PRAGMA secure_delete=ON")
                try execute("PRAGMA synchronous=\(synchronous.rawValue)")
                // On macOS fsync leaves the data in the drive's cache; F_FULLFSYNC does not.
                // Elsewhere this is a no-op.
                if synchronous == .full { try execute("PRAGMA fullfsync=ON") }
            case .readOnly:
                try execute("PRAGMA query_only=ON")
                let code = psq_disable_checkpoint_on_close(db)
                if code != SQLITE_OK { throw error(code, sql: nil) }
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Switches the file to write-ahead logging: a commit then appends to the log and fsyncs
    /// it once, and readers (an inspector) never block the writer.
    func enableWriteAheadLog() throws(SQLiteError) {
        let mode = try withStatement("PRAGMA journal_mode=WAL") { statement throws(SQLiteError) in
            try statement.step() ? statement.text(at: 0) : nil
        }
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(.sqlite(resultCode: SQLITE_ERROR),
                              "could not switch to write-ahead logging (journal mode is \(mode ?? "unknown"))",
                              sql: "PRAGMA journal_mode=WAL", path: path)
        }
    }

    /// Copies every page of the write-ahead log into the database and truncates the log to
    /// zero bytes, so page images from before a deletion no longer exist anywhere. Returns
    /// false when a reader held it back (it is tried again next time).
    /// - Parameter wait: whether to wait up to the busy timeout for readers (an inspector) to
    ///   finish. Periodic checkpoints do not: they run on the store thread, and commits (and so
    ///   acknowledgements) wait behind them.
    @discardableResult
    func checkpointTruncatingLog(wait: Bool = true) throws(SQLiteError) -> Bool {
        if !wait { sqlite3_busy_timeout(handle, 0) }
        defer { if !wait { sqlite3_busy_timeout(handle, busyTimeoutMs) } }
        return try withStatement("PRAGMA wal_checkpoint(TRUNCATE)") { statement throws(SQLiteError) in
            // One row: busy (1 if a reader or writer blocked it), log frames, frames checkpointed.
            try statement.step() ? statement.int64(at: 0) == 0 : false
        }
    }

    /// Runs SQL that may hold several statements and binds nothing (schema, pragmas).
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw SQLiteError(.sqlite(resultCode: code), text, sql: sql, path: path)
        }
    }

    /// Lends the cached statement for `sql`, then resets it and clears its bindings.
    func withStatement<T>(_ sql: String, _ body: (SQLiteStatement) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try lend(try prepare(sql), body)
    }

    /// `withStatement` for a statement the caller keeps in `slot` once prepared, so it is not
    /// found again by hashing its text (a resume's liveness UPDATE). The connection still owns
    /// it: `close` finalises it, and a closed connection throws here before `slot` is read.
    func withStatement<T>(in slot: inout OpaquePointer?, _ sql: String,
                          _ body: (SQLiteStatement) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        guard handle != nil else {
            throw SQLiteError(.sqlite(resultCode: SQLITE_MISUSE), "the connection is closed", sql: sql, path: path)
        }
        let statement: SQLiteStatement
        if let kept = slot {
            statement = SQLiteStatement(handle: kept, sql: sql, connection: self)
        } else {
            statement = try prepare(sql)
            slot = statement.handle
        }
        return try lend(statement, body)
    }

    /// Runs `body` with the statement, then resets it and clears its bindings, so it holds no
    /// lock and no stale value when it is lent again.
    private func lend<T>(_ statement: SQLiteStatement,
                         _ body: (SQLiteStatement) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        defer {
            sqlite3_reset(statement.handle)
            sqlite3_clear_bindings(statement.handle)
        }
        return try body(statement)
    }

    /// Runs one statement to completion with the given parameters.
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) {
        try withStatement(sql) { statement throws(SQLiteError) in
            try statement.bind(values)
            while try statement.step() {}
        }
    }

    /// Runs one statement to completion; how many rows it inserted, updated or deleted.
    func runCountingChanges(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        try run(sql, values)
        return changes
    }

    /// Rows the last INSERT, UPDATE or DELETE run to completion inserted, updated or deleted
    /// (a row an UPDATE matched counts, changed or not).
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Calls `row` for every row the query returns.
    func forEachRow(_ sql: String, _ values: [SQLiteValue] = [],
                    _ row: (SQLiteStatement) throws(SQLiteError) -> Void) throws(SQLiteError) {
        try withStatement(sql) { statement throws(SQLiteError) in
            try statement.bind(values)
            while try statement.step() { try row(statement) }
        }
    }

    /// The first column of the first row, as an integer (a count, a pragma).
    func integer(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int64? {
        try withStatement(sql) { statement throws(SQLiteError) in
            try statement.bind(values)
            return try statement.step() && !statement.isNull(at: 0) ? statement.int64(at: 0) : nil
        }
    }

    /// The first column of the first row, as text.
    func text(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> String? {
        try withStatement(sql) { statement throws(SQLiteError) in
            try statement.bind(values)
            return try statement.step() ? statement.text(at: 0) : nil
        }
    }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws. When
    /// it throws, nothing of the transaction is in the database.
    ///
    /// BEGIN IMMEDIATE takes the write lock up front, so a busy database fails here, before any
    /// work, instead of at the first write halfway through.
    ///
    /// A COMMIT that returns an error did not commit, as SQLite documents it: the transaction
    /// is either still open (SQLITE_BUSY: "the transaction remains active") or was rolled back
    /// automatically (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM may do that), and
    /// `sqlite3_get_autocommit` tells which. An open one is rolled back here, so either way it
    /// is gone, and a retry of the same writes applies them once. (In write-ahead-log mode the
    /// frames of a COMMIT whose fsync failed may still be in the log file; the wal-index was not
    /// advanced, so no reader sees them and the next commit writes over them. Only a process that
    /// dies before another commit could find them again at recovery, and then it never answered
    /// anything about them.) A transaction that cannot be rolled back leaves the connection
    /// unusable: `stuck`, which no retry gets past.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        precondition(!isInTransaction, "SQLite transactions do not nest")
        try run("BEGIN IMMEDIATE")
        let result: T
        do {
            result = try body()
        } catch {
            rollBack()
            throw error
        }
        do throws(SQLiteError) {
            try commit()
        } catch {
            rollBack()
            guard !isInTransaction else {
                throw SQLiteError(.stuck, "COMMIT failed (\(error.message)) and the transaction could not be rolled back",
                                  sql: "COMMIT", path: path)
            }
            throw error
        }
        return result
    }

    /// COMMIT, or the fault a test asked for in its place.
    private func commit() throws(SQLiteError) {
        guard let fault = commitFault else {
            try run("COMMIT")
            return
        }
        commitFault = nil
        switch fault {
        case .rolledBack:
            // What SQLITE_FULL or an I/O error at COMMIT may leave: the transaction rolled back.
            try run("ROLLBACK")
            throw SQLiteError(.sqlite(resultCode: SQLITE_IOERR), "injected: COMMIT failed and rolled back", sql: "COMMIT",
                              path: path)
        case .stillOpen:
            // What SQLITE_BUSY at COMMIT leaves: the transaction still open.
            throw SQLiteError(.sqlite(resultCode: SQLITE_BUSY), "injected: COMMIT failed, the transaction is still open",
                              sql: "COMMIT", path: path)
        }
    }

    /// Ends the transaction under way, if SQLite has not ended it already (a second ROLLBACK
    /// would only add a misleading error).
    private func rollBack() {
        if isInTransaction { try? run("ROLLBACK") }
    }

    /// Test hook, for the tests of a failed COMMIT (`SQLiteStoreTests`): the next COMMIT fails
    /// in one of the two ways SQLite documents. Never set outside tests.
    var commitFault: CommitFault?

    enum CommitFault {
        /// COMMIT returned an error and SQLite rolled the transaction back.
        case rolledBack
        /// COMMIT returned an error and the transaction is still open.
        case stillOpen
    }

    var isInTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// Finalises every cached statement and closes the database. Safe to call twice.
    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// An error for `code`, with SQLite's message for this connection.
    func error(_ code: Int32, sql: String?) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return SQLiteError(.sqlite(resultCode: code), message, sql: sql, path: path)
    }

    private func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        guard let handle else {
            throw SQLiteError(.sqlite(resultCode: SQLITE_MISUSE), "the connection is closed", sql: sql, path: path)
        }
        if let cached = statements[StatementKey(sql: sql)] { return SQLiteStatement(handle: cached, sql: sql, connection: self) }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw error(code, sql: sql)
        }
        statements[StatementKey(sql: sql)] = statement
        return SQLiteStatement(handle: statement, sql: sql, connection: self)
    }
}
