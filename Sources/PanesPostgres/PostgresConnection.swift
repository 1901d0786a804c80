// Threading: a connection belongs to one thread at a time (libpq's PGconn is not safe for
// concurrent use): the store's to the store thread, the listener's to the listener thread.
// It is created, handed to its thread once, and used and closed only there.
internal import CLibPQ
import Foundation

/// One `PGconn`, its prepared statements, and the way back after the connection is lost.
///
/// Statements run prepared: parameters are sent typed and binary, never spliced into SQL, and
/// each SQL text is parsed once per connection. A transaction runs in libpq's pipeline mode
/// (`PostgresConnection+Transaction.swift`): statements whose answers nobody needs yet travel
/// together with the next one whose answer is needed. After a lost connection the next call
/// reconnects (`reconnectIfNeeded`), so callers see one failure, then a working connection
/// once the server is back.
///
/// `@unchecked Sendable` because it is handed to its thread once and only that thread
/// touches it afterwards.
public final class PostgresConnection: @unchecked Sendable {
    /// The libpq connection string or URL (`postgres://user:password@host:port/db`).
    public let url: String
    var handle: OpaquePointer?
    /// SQL text → prepared statement name, for this connection (cleared on reconnect).
    var prepared: [String: String] = [:]
    /// Prepared statements named so far (`nextStatementName`).
    var statementsNamed = 0
    /// Test hook (internal, for `@testable` tests): how the next COMMIT's connection loss is simulated.
    var commitFault: CommitFault?
    /// Test hook (internal, for `@testable` tests): this many of the next asks whether a transaction committed
    /// fail as if the database could not be reached (`transactionStatus`).
    var unreachableStatusAsks = 0
    /// How a transaction that resolves a lost COMMIT marks itself, and how the mark is found
    /// (`transaction(resolvesLostCommit:)`); set by the store once its schema has the table.
    var commitMarker: CommitMarker?

    struct CommitMarker {
        /// Writes the marker ($1) in the transaction.
        let write: String
        /// Counts the rows with the marker ($1).
        let find: String
    }
    /// Notifications sent in the same round trip as the transaction's COMMIT (`notifyAtCommit`).
    var atCommit: [(channel: String, payload: String)] = []
    /// In a transaction (pipeline mode): what was sent and not answered yet, in order; nil
    /// outside one.
    var unanswered: [Sent]?
    /// How many round trips the transaction under way has had answered.
    var roundTrips = 0
    /// Statements run on every connection made from now on, right after it is made (session
    /// settings); a connection that cannot take them is not used.
    var setUp: [String] = []
    /// The `application_name` every connection made from now on starts with, in place of the
    /// URL's (nil: the URL's). Given at connection start, never changed on a live backend: a
    /// node ends a lapsed node's backends by this name (`PostgresStore.endBackends`), so a
    /// backend must never carry one name and then work under another.
    var applicationName: String?

    enum CommitFault: Sendable {
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
        unanswered = nil
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
        guard let connection = Self.open(url, applicationName: applicationName) else {
            throw PostgresError(.connection, "out of memory connecting to PostgreSQL")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(.connection, "cannot connect to PostgreSQL at \(PostgresURL.redacted(url)): \(message)")
        }
        ppq_silence_notices(connection)
        handle = connection
        guard !setUp.isEmpty else { return }
        do {
            try execute(setUp.joined(separator: "; "))
        } catch {
            close()
            throw error
        }
    }

    /// `PQconnectdb(url)`, with `applicationName` over the URL's when given: later keywords win
    /// over those the expanded URL (`dbname`) sets.
    private static func open(_ url: String, applicationName: String?) -> OpaquePointer? {
        guard let applicationName else { return PQconnectdb(url) }
        let keywords: [String] = ["dbname", "application_name"]
        let values: [String] = [url, applicationName]
        let copies: [UnsafeMutablePointer<CChar>?] = (keywords + values).map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        let pointers = copies.map { $0.map { UnsafePointer($0) } }
        let keywordPointers = Array(pointers[..<2]) + [nil]
        let valuePointers = Array(pointers[2...]) + [nil]
        return PQconnectdbParams(keywordPointers, valuePointers, 1)
    }

    /// The server process serving this connection (`pg_terminate_backend`, `pg_locks`).
    public var backendPID: Int32 {
        handle.map { PQbackendPID($0) } ?? 0
    }

    // MARK: Statements

    /// Runs SQL without parameters, several statements allowed (schema changes, BEGIN/COMMIT).
    public func execute(_ sql: String) throws(PostgresError) {
        let handle = try connected()
        let result = PQexec(handle, sql)
        try check(result, sql: sql)
        PQclear(result)
    }

    /// Runs one statement with typed parameters (`$1`, `$2`…) and returns its rows. In a
    /// transaction, whatever was sent before it goes in the same round trip.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresRows {
        if unanswered != nil {
            try send(sql, parameters)
            guard let rows = try answer() else {
                throw PostgresError(.unexpectedResult, "no result", sql: sql)
            }
            return rows
        }
        let handle = try connected()
        let name = try statement(sql, parameters, handle)
        let result = withParameters(parameters) { PQexecPrepared(handle, name, $0, $1, $2, $3, 1) }
        try check(result, sql: sql)
        return PostgresRows(result!)
    }

    /// Calls `body` with libpq's parameter arrays (count, values, lengths, formats: binary).
    func withParameters<R>(_ parameters: [PostgresValue],
                           _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>,
                                    UnsafePointer<Int32>) -> R) -> R {
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
        return body(Int32(wire.count), values, lengths, formats)
    }

    /// The first column of the first row as a bigint, nil when there is no row or it is NULL.
    func integer(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> Int64? {
        let rows = try query(sql, parameters)
        guard rows.count > 0 else { return nil }
        return rows.optionalInt64(0, 0)
    }

    func connected() throws(PostgresError) -> OpaquePointer {
        try reconnectIfNeeded()
        guard let handle else { throw PostgresError(.connection, "not connected") }
        return handle
    }

    /// The prepared statement for `sql`, preparing it on first use.
    private func statement(_ sql: String, _ parameters: [PostgresValue], _ handle: OpaquePointer) throws(PostgresError) -> String {
        if let name = prepared[sql] { return name }
        let name = nextStatementName()
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

    /// A name no statement of this connection had (one whose preparation was aborted in a
    /// pipeline is not used again).
    func nextStatementName() -> String {
        statementsNamed += 1
        return "p\(statementsNamed)"
    }

    /// Throws for a failed result, clearing it.
    func check(_ result: OpaquePointer?, sql: String) throws(PostgresError) {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return
        default:
            var message = result.map { String(cString: PQresultErrorMessage($0)) } ?? ""
            if message.isEmpty, let handle { message = String(cString: PQerrorMessage(handle)) }
            let sqlState = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
            // FATAL ends the session (an administrator's or a shutting-down server's termination
            // arrives as one before the socket closes): the connection is lost, whatever libpq
            // has noticed so far.
            let severity = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "V"))) }.map { String(cString: $0) }
            if let result { PQclear(result) }
            let lost = !isConnected || severity == "FATAL" || severity == "PANIC"
            throw PostgresError(lost ? .connection : .server, message, sqlState: sqlState, sql: sql)
        }
    }

    // MARK: Notifications (the listener's connection)

    /// The socket to wait on for notifications; -1 when not connected.
    var socket: Int32 {
        handle.map { PQsocket($0) } ?? -1
    }

    /// Whether the connection is still up after its socket became readable while no statement
    /// was under way: reads what arrived (a terminated backend's last message, the end of the
    /// stream) and asks libpq.
    func isAliveAfterReading() -> Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return false }
        guard PQconsumeInput(handle) == 1 else { return false }
        while let notify = PQnotifies(handle) { PQfreemem(notify) }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Reads what arrived on the socket and returns the notifications it completed.
    func receiveNotifications() throws(PostgresError) -> [(channel: String, payload: String)] {
        var skipped = 0
        return try receiveNotifications(skipped: &skipped)
    }

    /// Reads what arrived on the socket and returns the notifications it completed, but for
    /// those for which `skip` (given the payload as libpq holds it) says true: dropped before
    /// any of their text is copied. `skipped` counts them.
    func receiveNotifications(skipping skip: ((UnsafePointer<CChar>) -> Bool)? = nil, skipped: inout Int)
        throws(PostgresError) -> [(channel: String, payload: String)] {
        let handle = try connected()
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(.connection, String(cString: PQerrorMessage(handle)))
        }
        var notifications: [(String, String)] = []
        while let notify = PQnotifies(handle) {
            if let skip, skip(notify.pointee.extra) {
                skipped += 1
            } else {
                notifications.append((String(cString: notify.pointee.relname), String(cString: notify.pointee.extra)))
            }
            PQfreemem(notify)
        }
        // A connection that the server closed reads as consumed input and a bad status.
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(.connection, String(cString: PQerrorMessage(handle)))
        }
        return notifications
    }
}
