internal import CSQLite
internal import PanesCore

/// A prepared statement lent out by `SQLiteConnection.withStatement` for one use. It is reset
/// and its bindings cleared when that use ends, so it never holds a lock or a stale value
/// into the next one. Parameters are numbered from 1 and columns from 0, as in SQLite.
struct SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    let connection: SQLiteConnection

    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: try bindNull(at: index)
            case .int(let int): try bind(int, at: index)
            case .text(let text): try bind(text, at: index)
            case .blob(let blob): try bind(blob, at: index)
            }
        }
    }

    func bind(_ text: String, at index: Int32) throws(SQLiteError) {
        var text = text
        try check(text.withUTF8 { bindText(UnsafeRawBufferPointer($0), at: index) })
    }

    /// An identifier's bytes as text, without making a `String` of a packed one (and through
    /// `unpacked(into:)`, not the generic `withUTF8`, whose unspecialised call from this module
    /// cost more than the bind).
    func bind(_ id: InlineIdentifier, at index: Int32) throws(SQLiteError) {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let code = withUnsafeMutableBytes(of: &buffer) { raw -> Int32 in
            guard let count = id.unpacked(into: raw.baseAddress!) else {
                var text = id.string
                return text.withUTF8 { bindText(UnsafeRawBufferPointer($0), at: index) }
            }
            return bindText(UnsafeRawBufferPointer(rebasing: raw[..<count]), at: index)
        }
        try check(code)
    }

    /// Runs `body` with an identifier's bytes bound as text at `index` where they are, not
    /// copied by SQLite (`SQLITE_STATIC`): `body` steps the statement while they are there;
    /// then the statement is reset and the parameter bound to NULL before they go (SQLite
    /// refuses a bind to a statement that was stepped and not reset, which would leave it
    /// pointing at them). A resume's liveness write binds its session so: SQLite's copy of a
    /// transient text is a malloc, a copy and a free (~250 instructions a write, issue 27).
    func withBound<R>(_ id: InlineIdentifier, at index: Int32,
                      _ body: () throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let outcome = withUnsafeMutableBytes(of: &buffer) { raw -> Result<R, SQLiteError> in
            defer {
                sqlite3_reset(handle)
                sqlite3_bind_null(handle, index)
            }
            return Result { () throws(SQLiteError) -> R in
                if let count = id.unpacked(into: raw.baseAddress!) {
                    try check(sqlite3_bind_text64(handle, index, raw.baseAddress!.assumingMemoryBound(to: CChar.self),
                                                  sqlite3_uint64(count), nil, UInt8(SQLITE_UTF8)))
                } else {
                    // Not packed: bound as any text is (copied by SQLite).
                    try bind(id.string, at: index)
                }
                return try body()
            }
        }
        return try outcome.get()
    }

    private func bindText(_ utf8: UnsafeRawBufferPointer, at index: Int32) -> Int32 {
        // Bound with an explicit length so text holding NUL survives, and copied (transient)
        // because the UTF-8 buffer lives only for this call.
        guard let base = utf8.baseAddress, !utf8.isEmpty else {
            return sqlite3_bind_text(handle, index, "", 0, psq_transient())
        }
        return sqlite3_bind_text64(handle, index, base.assumingMemoryBound(to: CChar.self), sqlite3_uint64(utf8.count),
                                   psq_transient(), UInt8(SQLITE_UTF8))
    }

    func bind(_ int: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, int))
    }

    func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index))
    }

    func bind(_ blob: [UInt8], at index: Int32) throws(SQLiteError) {
        // A NULL pointer would bind SQL NULL; an empty blob must stay an empty blob.
        let code = blob.isEmpty
            ? sqlite3_bind_zeroblob(handle, index, 0)
            : blob.withUnsafeBytes { sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), psq_transient()) }
        try check(code)
    }

    /// Runs the statement to its next row.
    /// - Returns: true when a row is ready to read, false when the statement is done.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(code, sql: sql)
        }
    }

    func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    func int64(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// The column as text; NULL reads as nil.
    func text(at column: Int32) -> String? {
        // sqlite3_column_bytes must come after sqlite3_column_text, which may convert the value.
        guard let bytes = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func blob(at column: Int32) -> [UInt8]? {
        if isNull(at: column) { return nil }
        let bytes = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let bytes, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    private func check(_ code: Int32) throws(SQLiteError) {
        if code != SQLITE_OK { throw connection.error(code, sql: sql) }
    }
}
