/// Why a PostgreSQL call failed: the server's refusal with its SQLSTATE, a lost or refused
/// connection, or a result this module cannot read.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The connection could not be made, or was lost: retrying on a new one may succeed.
        case connection
        /// The server refused the statement; `sqlState` says why (`23505` unique violation…).
        case server
        /// A result did not have the shape the store expects (a bug, or a foreign schema).
        case unexpectedResult
        /// The database was migrated by a newer build, whose schema this one does not know.
        case schemaTooNew
        /// The store URL or a command asks for something the store cannot do.
        case invalidRequest
        /// A test asked for a failure in the middle of a batch.
        case injectedFault
        /// The connection was lost while COMMIT was under way and whether the transaction
        /// committed could not be asked: `transactionID` says which transaction to ask about.
        case outcomeUnknown
    }

    public var kind: Kind
    /// The five-character SQLSTATE, when the server sent one.
    public var sqlState: String?
    public var message: String
    /// The statement that failed, when one did.
    public var sql: String?
    /// `.outcomeUnknown`: the transaction (`txid_current()`) and the server process it ran on.
    public var transactionID: Int64?
    public var backendPID: Int32?
    /// `.outcomeUnknown`: the marker the transaction wrote (`PostgresConnection.commitMarker`).
    public var marker: String?

    public init(_ kind: Kind, _ message: String, sqlState: String? = nil, sql: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.sql = sql
    }

    /// Whether the same work may succeed later without any change to it: the connection
    /// was lost, the server is shutting down or starting, out of resources, or the
    /// transaction lost a serialization race or a deadlock. A constraint violation is not.
    public var isTransient: Bool {
        if kind == .connection { return true }
        guard let sqlState else { return false }
        // 08 connection exception, 53 insufficient resources, 57 operator intervention (admin
        // shutdown, cannot connect now), 40 transaction rollback (serialization, deadlock),
        // 58 system error (I/O).
        return ["08", "53", "57", "40", "58"].contains(String(sqlState.prefix(2)))
    }

    public var description: String {
        var text = message.trimmingSuffix()
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let sql { text += " in `\(sql.prefix(120))`" }
        return text
    }
}

extension String {
    /// libpq's messages end with a newline.
    fileprivate func trimmingSuffix() -> String {
        var text = self
        while text.last == "\n" || text.last == " " { text.removeLast() }
        return text
    }
}
