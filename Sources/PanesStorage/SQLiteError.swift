/// Why the SQLite store failed: SQLite's own refusal with its message and the statement, or a
/// database the store will not touch.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// SQLite returned an error; the extended result code (`SQLITE_BUSY`, `SQLITE_READONLY`…).
        case sqlite(resultCode: Int32)
        /// The database was written by a newer build, whose schema this one does not know.
        case schemaTooNew(found: Int64, known: Int64)
        /// A read-only open found a schema older than this build reads; the server migrates it.
        case schemaTooOld(found: Int64, known: Int64)
        /// A read-only open was asked for a file that is not there.
        case missingDatabase
        /// A write was asked of a store opened read-only.
        case readOnly
        /// A command the schema cannot represent faithfully, refused before it mixes with other data.
        case invalidCommand
        /// A test asked for a failure in the middle of a batch.
        case injectedFault
        /// A transaction could be neither committed nor rolled back: the connection cannot be
        /// used again (nothing of that transaction is in the database).
        case stuck
        /// The data folder or a database file cannot be made private to this user (not ours,
        /// or its mode cannot be changed).
        case notPrivate
    }

    public var reason: Reason
    /// SQLite's message, or ours.
    public var message: String
    /// The statement that failed, when one did.
    public var sql: String?
    public var path: String

    public init(_ reason: Reason, _ message: String, sql: String? = nil, path: String) {
        self.reason = reason
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// The primary result code (`SQLITE_READONLY` for every `SQLITE_READONLY_*`), or nil when
    /// SQLite did not raise this error.
    public var primaryResultCode: Int32? {
        if case .sqlite(let code) = reason { code & 0xFF } else { nil }
    }

    public var description: String {
        var text = "\(path): \(message)"
        if case .sqlite(let code) = reason { text += " (SQLite error \(code))" }
        if let sql { text += " in `\(sql)`" }
        return text
    }
}
