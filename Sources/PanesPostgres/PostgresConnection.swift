// Threading: a connection belongs to one thread at a time (libpq's PGconn is not safe for
// concurrent use): the store's to the store thread, the listener's to the listener thread.
// It is created, handed to its thread once, and used and closed only there.
internal import CLibPQ
import Foundation

/// One `PGconn`, its prepared statements, and the way back after the connection is lost.
///
/// Statements run with `PQexecPrepared`: parameters are sent typed and binary, never spliced
/// into SQL, and each SQL text is parsed once per connection. After a lost connection the
/// next call reconnects (`reconnectIfNeeded`), so callers see one failure, then a working
/// connection once the server is back.
///
/// `@unchecked Sendable` because it is handed to its thread once and only that thread
/// touches it afterwards.
public final class PostgresConnection: @unchecked Sendable {
    /// The libpq connection string or URL (`postgres://user:password@host:port/db`).
    public let url: String
    private var handle: OpaquePointer?
    /// SQL text → prepared statement name, for this connection (cleared on reconnect).
    private var prepared: [String: String] = [:]
    /// Test hook: how the next COMMIT's connection loss is simulated.
    var commitFault: CommitFault?
    /// Statements sent in the same round trip as the transaction's COMMIT (`notifyAtCommit`).
    private var atCommit: [String] = []

    enum CommitFault {
        /// The server committed, but its answer never came back.
        case replyLost
        /// The connection was lost before the server saw COMMIT.
        case neverArrived
    }

    /// Connects now; throws `.connection` when the server cannot be reached or refuses us.
    public init(url: String) throws(PostgresError) {
        self.url = url
        try connect()
    }

    deinit { close() }

    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        prepared.removeAll()
    }

    /// Whether the connection is up as far as libpq knows (a dead peer is noticed on use).
    public var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Connects again if the connection was lost; a no-op when it is up.
    public func reconnectIfNeeded() throws(PostgresError) {
        guard !isConnected else { return }
        close()
        try connect()
    }

    private func connect() throws(PostgresError) {
        guard let connection = PQconnectdb(url) else {
            throw PostgresError(.connection, "out of memory connecting to PostgreSQL")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(.connection, "cannot connect to PostgreSQL at \(PostgresURL.redacted(url)): \(message)")
        }
        ppq_silence_notices(connection)
        handle = connection
    }

    /// The server process serving this connection, for `pg_terminate_backend` in tests.
    public var backendPID: Int32 {
        handle.map { PQbackendPID($0) } ?? 0
    }

    // MARK: Statements

    /// Runs SQL without parameters, several statements allowed (schema changes, BEGIN/COMMIT).
    /// - Returns: the first column of the last statement's first row, as text (nil: no row).
    @discardableResult
    public func execute(_ sql: String) throws(PostgresError) -> String? {
        let handle = try connected()
        let result = PQexec(handle, sql)
        try check(result, sql: sql)
        defer { PQclear(result) }
        guard PQntuples(result) > 0, PQnfields(result) > 0, PQgetisnull(result, 0, 0) == 0,
              let value = PQgetvalue(result, 0, 0) else { return nil }
        return String(cString: value)
    }

    /// Runs one statement with typed parameters (`$1`, `$2`…) and returns its rows.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresRows {
        let handle = try connected()
        let name = try statement(sql, parameters, handle)
        let wire = parameters.map(\.wireBytes)
        let values = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(wire.count, 1))
        let lengths = UnsafeMutablePointer<Int32>.allocate(capacity: max(wire.count, 1))
        let formats = UnsafeMutablePointer<Int32>.allocate(capacity: max(wire.count, 1))
        var buffers: [UnsafeMutablePointer<CChar>] = []
        defer {
            for buffer in buffers { buffer.deallocate() }
            values.deallocate()
            lengths.deallocate()
            formats.deallocate()
        }
        for (index, bytes) in wire.enumerated() {
            formats[index] = 1
            guard let bytes else {
                values[index] = nil
                lengths[index] = 0
                continue
            }
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBytes { raw in
                if let base = raw.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: raw.count) }
            }
            buffers.append(buffer)
            values[index] = UnsafePointer(buffer)
            lengths[index] = Int32(bytes.count)
        }
        let result = PQexecPrepared(handle, name, Int32(wire.count), values, lengths, formats, 1)
        try check(result, sql: sql)
        return PostgresRows(result!)
    }

    /// The first column of the first row as a bigint, nil when there is no row or it is NULL.
    func integer(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> Int64? {
        let rows = try query(sql, parameters)
        guard rows.count > 0 else { return nil }
        return rows.optionalInt64(0, 0)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// - Parameter isolation: e.g. `REPEATABLE READ` for reads that must see one snapshot.
    ///   - resolvesLostCommit: when the connection is lost while COMMIT is under way, nobody
    ///     knows whether the transaction committed; with this set, the transaction notes its id
    ///     first and, on such a loss, reconnects and asks the server (`txid_status`): committed
    ///     means `body`'s value is returned as if nothing had happened, so a caller never redoes
    ///     work that is already in (which a retry of the same writes would do twice).
    public func transaction<T>(isolation: String? = nil, resolvesLostCommit: Bool = false,
                               _ body: () throws -> T) throws -> T {
        var begin = isolation.map { "BEGIN ISOLATION LEVEL \($0)" } ?? "BEGIN"
        // The transaction's id comes back with the BEGIN, in the same round trip.
        if resolvesLostCommit { begin += "; SELECT txid_current()" }
        var started: String?
        if case .started(let answer) = try beginReconnecting(begin) {
            started = answer
        } else {
            // The connection died while idle (a server restart, an idle timeout) and this is
            // how we learn it; nothing of the transaction was sent, so a new one may start it.
            close()
            started = try execute(begin)
        }
        let value: T
        var transactionID: Int64?
        atCommit = []
        do {
            if resolvesLostCommit {
                guard let id = started.flatMap({ Int64($0) }) else {
                    throw PostgresError(.unexpectedResult, "txid_current() answered \(started ?? "nothing")")
                }
                transactionID = id
            }
            value = try body()
        } catch {
            atCommit = []
            // A lost connection has no transaction left to roll back.
            if isConnected { _ = try? execute("ROLLBACK") }
            throw error
        }
        let commit = (atCommit + ["COMMIT"]).joined(separator: "; ")
        atCommit = []
        do throws(PostgresError) {
            switch commitFault {
            case nil:
                try execute(commit)
            case .replyLost?:
                try execute(commit)
                commitFault = nil
                throw PostgresError(.connection, "injected: the COMMIT reply was lost")
            case .neverArrived?:
                commitFault = nil
                close()
                throw PostgresError(.connection, "injected: the connection was lost before COMMIT arrived")
            }
        } catch {
            // A statement before COMMIT failed: the rest of the string was skipped and the
            // transaction is still open (aborted); end it. After a failed COMMIT this is a no-op.
            if error.kind != .connection, isConnected { _ = try? execute("ROLLBACK") }
            guard error.kind == .connection, let transactionID else { throw error }
            guard (try? committed(transactionID)) == true else { throw error }
        }
        return value
    }

    /// Sends `pg_notify(channel, payload)` with the COMMIT of the transaction under way, in
    /// the same round trip: what a notification says is delivered at commit anyway, and a
    /// busy channel's every transaction notifies. `payload` travels as an escaped literal
    /// (libpq's own escaping), never spliced raw; NUL becomes U+FFFD as in `PostgresValue`.
    func notifyAtCommit(_ channel: String, _ payload: String) throws(PostgresError) {
        let handle = try connected()
        var literals: [String] = []
        for text in [channel, payload] {
            let bytes = Array(text.utf8).flatMap { $0 == 0 ? [0xEF, 0xBF, 0xBD] : [$0] }
            let escaped = bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { PQescapeLiteral(handle, $0.baseAddress, $0.count) }
            }
            guard let escaped else {
                throw PostgresError(.invalidRequest, "cannot escape a notification: " + String(cString: PQerrorMessage(handle)))
            }
            literals.append(String(cString: escaped))
            PQfreemem(escaped)
        }
        atCommit.append("SELECT pg_notify(\(literals[0]), \(literals[1]))")
    }

    /// Whether a transaction of an earlier connection committed, asked on a new one.
    private func committed(_ transactionID: Int64) throws(PostgresError) -> Bool {
        close()
        let rows = try query("SELECT txid_status($1)", [.int(transactionID)])
        return rows.count > 0 && rows.text(0, 0) == "committed"
    }

    private enum Begun {
        /// BEGIN ran; with the last statement's answer, if it had one.
        case started(String?)
        case connectionLost
    }

    /// Runs BEGIN; `.connectionLost` when the connection turned out to be lost (any other
    /// error throws).
    private func beginReconnecting(_ begin: String) throws(PostgresError) -> Begun {
        do {
            return .started(try execute(begin))
        } catch {
            if error.kind == .connection { return .connectionLost }
            throw error
        }
    }

    private func connected() throws(PostgresError) -> OpaquePointer {
        try reconnectIfNeeded()
        guard let handle else { throw PostgresError(.connection, "not connected") }
        return handle
    }

    /// The prepared statement for `sql`, preparing it on first use.
    private func statement(_ sql: String, _ parameters: [PostgresValue], _ handle: OpaquePointer) throws(PostgresError) -> String {
        if let name = prepared[sql] { return name }
        let name = "p\(prepared.count + 1)"
        // NULL parameters carry no type: the server infers it from the statement.
        let types = parameters.map(\.typeOID)
        let result = types.withUnsafeBufferPointer { types in
            PQprepare(handle, name, sql, Int32(types.count), types.baseAddress)
        }
        try check(result, sql: sql)
        PQclear(result)
        prepared[sql] = name
        return name
    }

    /// Throws for a failed result, clearing it.
    private func check(_ result: OpaquePointer?, sql: String) throws(PostgresError) {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return
        default:
            var message = result.map { String(cString: PQresultErrorMessage($0)) } ?? ""
            if message.isEmpty, let handle { message = String(cString: PQerrorMessage(handle)) }
            let sqlState = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
            if let result { PQclear(result) }
            let lost = !isConnected
            throw PostgresError(lost ? .connection : .server, message, sqlState: sqlState, sql: sql)
        }
    }

    // MARK: Notifications (the listener's connection)

    /// The socket to wait on for notifications; -1 when not connected.
    var socket: Int32 {
        handle.map { PQsocket($0) } ?? -1
    }

    /// Reads what arrived on the socket and returns the notifications it completed.
    func receiveNotifications() throws(PostgresError) -> [(channel: String, payload: String)] {
        let handle = try connected()
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(.connection, String(cString: PQerrorMessage(handle)))
        }
        var notifications: [(String, String)] = []
        while let notify = PQnotifies(handle) {
            notifications.append((String(cString: notify.pointee.relname), String(cString: notify.pointee.extra)))
            PQfreemem(notify)
        }
        // A connection that the server closed reads as consumed input and a bad status.
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(.connection, String(cString: PQerrorMessage(handle)))
        }
        return notifications
    }
}
