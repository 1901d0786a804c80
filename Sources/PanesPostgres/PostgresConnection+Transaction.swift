// Threading: as the connection's (one thread at a time).
internal import CLibPQ
import Foundation

/// Transactions, in libpq's pipeline mode.
///
/// Why a pipeline: a busy channel's transaction is a chain of short statements (BEGIN, its
/// id, the locks, the version, the write, the NOTIFY, COMMIT), and while it holds a channel's
/// lock another node waits for each round trip of it. In pipeline mode a statement whose answer
/// nobody needs yet (`send`) is only queued; it travels with the next statement whose answer
/// is needed (`query`, `integer`) or with the COMMIT. The server still runs them one after the
/// other, each with its own snapshot, so a read queued after a lock reads what was committed
/// before the lock was granted. A write whose statement fails is reported at that next round
/// trip; the transaction is then aborted and rolled back as before.
extension PostgresConnection {
    /// One message sent in pipeline mode whose answer has not been read.
    struct Sent {
        let sql: String
        /// The name it is being prepared under (its Parse), when this is a preparation.
        var preparing: String?
        /// Called with the statement's rows when they arrive.
        var onRows: ((PostgresRows) -> Void)?
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// - Parameters:
    ///   - isolation: e.g. `REPEATABLE READ` for reads that must see one snapshot.
    ///   - resolvesLostCommit: when the connection is lost while COMMIT is under way, nobody
    ///     knows whether the transaction committed; with this set, the transaction notes its id
    ///     and writes a marker of its own (`commitMarker`) first and, on such a loss, reconnects
    ///     and asks the server (`transactionStatus`): committed means `body`'s value is
    ///     returned as if nothing had happened, so a caller never redoes work that is already in
    ///     (which a retry of the same writes would do twice); aborted means the loss is thrown,
    ///     and nothing was applied. When the server cannot be asked (it is down),
    ///     `.outcomeUnknown` is thrown with the transaction's id and marker: the caller must
    ///     neither retry the work nor report it failed before it knows.
    ///
    /// `body` may run twice: when the connection turns out to be lost at the transaction's first
    /// round trip (it died while idle: a server restart, an idle timeout), nothing of it reached
    /// the server and it starts again on a new connection. So `body` keeps its state inside and
    /// acts on nothing outside before its first answer.
    public func transaction<T>(isolation: String? = nil, resolvesLostCommit: Bool = false,
                               _ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            var transactionID: Int64?
            let backend = backendPID
            let marker = resolvesLostCommit && commitMarker != nil ? Self.newMarker() : nil
            do {
                try begin(isolation, onID: resolvesLostCommit ? { transactionID = $0 } : nil, marker: marker)
            } catch {
                // Half begun (in pipeline mode, BEGIN perhaps queued): start afresh next time.
                close()
                throw error
            }
            let value: T
            do {
                value = try body()
                // The BEGIN is answered before the COMMIT goes: its transaction id is what
                // tells, after a lost COMMIT, whether it committed.
                if roundTrips == 0 { try answer() }
            } catch {
                let lostAtBegin = (error as? PostgresError)?.kind == .connection && roundTrips == 0
                abandon()
                if lostAtBegin, attempt == 1 { continue }
                throw error
            }
            try commit(transactionID: transactionID, resolvesLostCommit: resolvesLostCommit,
                       backend: backendPID == 0 ? backend : backendPID, marker: marker)
            return value
        }
    }

    /// Sends `pg_notify(channel, payload)` with the COMMIT of the transaction under way, in
    /// the same round trip: what a notification says is delivered at commit anyway, and a
    /// busy channel's every transaction notifies. Both travel as parameters; NUL becomes U+FFFD
    /// as in `PostgresValue`.
    func notifyAtCommit(_ channel: String, _ payload: String) throws(PostgresError) {
        guard unanswered != nil else { throw PostgresError(.invalidRequest, "a notification at commit needs a transaction") }
        atCommit.append((channel, payload))
    }

    /// Queues a statement whose answer nobody needs now: it goes with the next round trip,
    /// and a failure of it is thrown there. Outside a transaction it runs at once.
    func send(_ sql: String, _ parameters: [PostgresValue] = [], onRows: ((PostgresRows) -> Void)? = nil)
        throws(PostgresError) {
        guard unanswered != nil else {
            let rows = try query(sql, parameters)
            onRows?(rows)
            return
        }
        let handle = try pipelineHandle(sql)
        var name = prepared[sql]
        if name == nil {
            let newName = nextStatementName()
            // NULL parameters carry no type: the server infers it from the statement.
            let types = parameters.map(\.typeOID)
            let sent = types.withUnsafeBufferPointer { PQsendPrepare(handle, newName, sql, Int32($0.count), $0.baseAddress) }
            guard sent == 1 else { throw sendFailure(sql, handle) }
            prepared[sql] = newName
            unanswered?.append(Sent(sql: sql, preparing: newName))
            name = newName
        }
        let sent = withParameters(parameters) { PQsendQueryPrepared(handle, name, $0, $1, $2, $3, 1) }
        guard sent == 1 else { throw sendFailure(sql, handle) }
        unanswered?.append(Sent(sql: sql, onRows: onRows))
    }

    /// Sends what was queued, waits for every answer, and returns the last statement's rows.
    /// Throws the first failure among them (after reading them all, so the connection stays in
    /// step); the transaction is then aborted.
    @discardableResult
    func answer() throws(PostgresError) -> PostgresRows? {
        guard let sent = unanswered else { throw PostgresError(.invalidRequest, "no transaction under way") }
        let handle = try pipelineHandle("(sync)")
        unanswered = []
        guard PQpipelineSync(handle) == 1 else { throw sendFailure("(sync)", handle) }
        var failure: PostgresError?
        var last: PostgresRows?
        var index = 0
        var answered: [Bool] = Array(repeating: false, count: sent.count)
        reading: while true {
            // Each statement's results end with a NULL; the sync point's result ends them all.
            guard let result = PQgetResult(handle) else {
                guard isConnected else {
                    failure = failure ?? PostgresError(.connection, String(cString: PQerrorMessage(handle)))
                    break reading
                }
                index += 1
                if index > sent.count + 1 {
                    failure = failure ?? PostgresError(.unexpectedResult, "the pipeline's answers are out of step")
                    break reading
                }
                continue
            }
            let entry = index < sent.count ? sent[index] : nil
            switch PQresultStatus(result) {
            case PGRES_PIPELINE_SYNC:
                PQclear(result)
                break reading
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                let rows = PostgresRows(result)
                if let entry, failure == nil {
                    answered[index] = true
                    entry.onRows?(rows)
                    if entry.preparing == nil { last = rows }
                }
            case PGRES_PIPELINE_ABORTED:
                PQclear(result)
            default:
                do { try check(result, sql: entry?.sql ?? "(pipeline)") } catch { failure = failure ?? error }
            }
        }
        // A preparation the server did not carry out (failed, or skipped after a failure) does
        // not exist there: prepare it again next time.
        for (position, entry) in sent.enumerated() where entry.preparing != nil && !answered[position] {
            prepared[entry.sql] = nil
        }
        if let failure {
            if failure.kind == .connection { close() }
            throw failure
        }
        roundTrips += 1
        return last
    }

    // MARK: Steps

    /// A marker no other transaction writes: 128 random bits, hex.
    static func newMarker() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }

    private func begin(_ isolation: String?, onID: ((Int64) -> Void)?, marker: String?) throws(PostgresError) {
        try reconnectIfNeeded()
        guard let handle, PQenterPipelineMode(handle) == 1 else {
            throw PostgresError(.connection, "cannot enter pipeline mode: " + (handle.map { String(cString: PQerrorMessage($0)) } ?? ""))
        }
        unanswered = []
        atCommit = []
        roundTrips = 0
        try sendUnprepared(isolation.map { "BEGIN ISOLATION LEVEL \($0)" } ?? "BEGIN")
        if let onID {
            try send("SELECT txid_current()", onRows: { rows in
                if rows.count > 0 { onID(rows.int64(0, 0)) }
            })
        }
        if let marker, let commitMarker {
            try send(commitMarker.write, [.text(marker)])
        }
    }

    private func commit(transactionID: Int64?, resolvesLostCommit: Bool, backend: Int32, marker: String?)
        throws(PostgresError) {
        do throws(PostgresError) {
            if resolvesLostCommit, transactionID == nil {
                throw PostgresError(.unexpectedResult, "txid_current() did not answer")
            }
            for (channel, payload) in atCommit {
                try send("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
            }
            atCommit = []
            if case .neverArrived? = commitFault {
                commitFault = nil
                // Before the COMMIT is queued: closing flushes what is queued.
                close()
                throw PostgresError(.connection, "injected: the connection was lost before COMMIT arrived")
            }
            try sendUnprepared("COMMIT")
            try answer()
            if case .replyLost? = commitFault {
                commitFault = nil
                throw PostgresError(.connection, "injected: the COMMIT reply was lost")
            }
            leavePipeline()
        } catch {
            // A statement before COMMIT failed: the transaction is still open (aborted); end it.
            // After a failed COMMIT the ROLLBACK finds none, which is harmless. A connection
            // whose COMMIT went unanswered is not used again.
            if error.kind == .connection { close() } else { abandon() }
            guard error.kind == .connection, let transactionID else { throw error }
            let committed: Bool
            do {
                committed = try transactionStatus(transactionID, backend: backend, marker: marker)
            } catch {
                var unknown = PostgresError(.outcomeUnknown, "the connection was lost around COMMIT (\(error)), "
                                                + "and whether transaction \(transactionID) committed cannot be asked now: \(error)")
                unknown.transactionID = transactionID
                unknown.backendPID = backend
                unknown.marker = marker
                throw unknown
            }
            // Aborted: the loss is what happened, and nothing was applied.
            guard committed else { throw error }
        }
    }

    /// Ends a failed transaction: what was queued is answered and ignored, then ROLLBACK; a
    /// connection that cannot do that is closed, which ends the transaction too.
    private func abandon() {
        atCommit = []
        guard unanswered != nil, isConnected else {
            close()
            return
        }
        _ = try? answer()
        do {
            try sendUnprepared("ROLLBACK")
            try answer()
            leavePipeline()
        } catch {
            close()
        }
    }

    private func leavePipeline() {
        unanswered = nil
        if let handle, PQexitPipelineMode(handle) != 1 { close() }
    }

    /// Whether a transaction of an earlier connection committed (true) or not (false), asked on
    /// a new connection. First its server process must be gone: one that has not noticed yet
    /// that its client left (COMMIT may even be on its way to it) could still commit, so it is
    /// ended, which settles it. Then the transaction's own marker (`commitMarker`) is looked for:
    /// it is there if and only if the transaction committed. (`txid_status` alone is not enough:
    /// after a crash, PostgreSQL hands out again the ids of transactions whose records never
    /// reached its log, so a lost transaction's id may name another one that committed.)
    /// Without a marker, `txid_status` is the answer. Throws while the server cannot be
    /// reached, or still cannot tell.
    /// - Parameters:
    ///   - backend: the server process the transaction ran on.
    ///   - marker: what the transaction wrote to `commitMarker`'s table.
    public func transactionStatus(_ transactionID: Int64, backend: Int32?, marker: String? = nil) throws(PostgresError)
        -> Bool {
        close()
        if unreachableStatusAsks > 0 {
            unreachableStatusAsks -= 1
            throw PostgresError(.connection, "injected: the database cannot be reached to ask about transaction \(transactionID)")
        }
        // Only while that process still runs this very transaction (pids are reused).
        let stillRunning = """
            SELECT count(pg_terminate_backend(pid))::bigint FROM pg_stat_activity
            WHERE pid = $1 AND backend_xid::text::bigint = $2
            """
        var running = true
        for _ in 0..<40 where running {
            running = (try integer(stillRunning, [.int(Int64(backend ?? 0)), .int(transactionID & 0xFFFF_FFFF)]) ?? 0) > 0
            if running { usleep(50_000) }
        }
        guard !running else {
            throw PostgresError(.connection, "transaction \(transactionID) is still running on the server")
        }
        if let marker, let commitMarker {
            return (try integer(commitMarker.find, [.text(marker)]) ?? 0) > 0
        }
        let rows = try query("SELECT txid_status($1)", [.int(transactionID)])
        switch rows.count > 0 ? rows.text(0, 0) : nil {
        case "committed": return true
        case "aborted": return false
        case "in progress": throw PostgresError(.connection, "transaction \(transactionID) is still in progress on the server")
        default:
            // NULL: too old for the server to remember; never the case for a moment-old one.
            throw PostgresError(.unexpectedResult, "PostgreSQL does not know whether transaction \(transactionID) committed")
        }
    }

    /// Queues a statement without preparing it (BEGIN, COMMIT: nothing to parse twice).
    private func sendUnprepared(_ sql: String) throws(PostgresError) {
        let handle = try pipelineHandle(sql)
        guard PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 1) == 1 else { throw sendFailure(sql, handle) }
        unanswered?.append(Sent(sql: sql))
    }

    /// The handle of the transaction under way; a lost connection is not silently replaced in
    /// the middle of one.
    private func pipelineHandle(_ sql: String) throws(PostgresError) -> OpaquePointer {
        guard let handle, isConnected else {
            throw PostgresError(.connection, "the connection was lost in a transaction", sql: sql)
        }
        return handle
    }

    private func sendFailure(_ sql: String, _ handle: OpaquePointer) -> PostgresError {
        let message = String(cString: PQerrorMessage(handle))
        return PostgresError(isConnected ? .server : .connection, message.isEmpty ? "cannot send" : message, sql: sql)
    }
}
