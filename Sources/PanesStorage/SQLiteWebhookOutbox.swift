// Threading: an outbox owns its own connection, used by one thread (the webhook engine's
// outbox thread). The static `insert(_:into:)` runs on whatever thread holds the connection it
// is given: the store thread, inside the transaction of the change the events report.
internal import CSQLite
public import PanesCore
internal import PanesJSON

/// The webhook outbox in the SQLite database (migration 9's `webhook_outbox`): events are
/// written by the store in the transaction of the change they report (`insert(_:into:)`), and
/// claimed, rescheduled and removed by the delivery engine through a connection of its own.
///
/// One process owns the database, so a claim is a plain update under SQLite's write lock; its
/// lease only matters across a restart (a delivery claimed by a killed process is claimed
/// again once its lease runs out). The engine's writes are short transactions beside the
/// store's; they use `synchronous=NORMAL`: losing the last of them in a power cut only
/// repeats a delivery or an attempt, which at-least-once delivery allows.
///
/// `@unchecked Sendable` because it is created on one thread and handed to the engine's outbox
/// thread once; only that thread uses it afterwards.
public final class SQLiteWebhookOutbox: WebhookOutbox, @unchecked Sendable {
    let connection: SQLiteConnection

    /// Opens the database the store already migrated (open the store first).
    /// - Parameter cacheKiB: the most memory this connection keeps pages of the file in, as
    ///   the store's (the setting `sqliteCacheKiB`); nil: SQLite's default (2,000 KiB).
    public init(path: String, cacheKiB: Int? = nil) throws {
        connection = try SQLiteConnection(path: path, mode: .readWrite(synchronous: .normal))
        if let cacheKiB { try connection.limitCache(kiB: cacheKiB) }
        guard try connection.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'webhook_outbox'") == 1 else {
            connection.close()
            throw SQLiteError(.schemaTooOld(found: try Migrations.version(of: connection), known: Migrations.latest),
                              "the database has no webhook outbox yet: open the store (which migrates it) first", path: path)
        }
    }

    deinit { connection.close() }

    /// This connection's page cache limit, in KiB, as SQLite holds it.
    public func cacheKiB() throws -> Int { try connection.cacheKiB() }

    /// Migration 9.
    static let schema = """
        -- One row per event per endpoint that wants it, written in the transaction of the change
        -- it reports; deleted once delivered, kept as 'dead' once given up on. For one endpoint
        -- and ordering key, rows are delivered one at a time in seq order (AUTOINCREMENT: a seq
        -- is never used twice, so a late outcome can never touch a newer row).
        CREATE TABLE webhook_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            type TEXT NOT NULL,
            workspace TEXT NOT NULL,
            ordering_key TEXT NOT NULL,
            revision_from INTEGER,          -- a document change's range, NULL otherwise
            revision_to INTEGER,
            data TEXT NOT NULL,             -- JSON object
            created_at INTEGER NOT NULL,    -- milliseconds since the epoch, as every time here
            state TEXT NOT NULL DEFAULT 'pending',  -- 'pending' or 'dead'
            next_attempt_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            first_attempt_at INTEGER,
            lease_owner TEXT,
            lease_until INTEGER,
            last_status INTEGER,
            last_error TEXT,
            changes INTEGER NOT NULL DEFAULT 1,
            UNIQUE (endpoint, event_id)
        );
        CREATE INDEX webhook_outbox_order ON webhook_outbox (endpoint, ordering_key, seq) WHERE state = 'pending';
        CREATE INDEX webhook_outbox_due ON webhook_outbox (endpoint, next_attempt_at) WHERE state = 'pending';
        """

    // MARK: Writing, inside the change's transaction

    /// Writes the entries with `connection`, which must be inside the transaction of the change
    /// they report (so they commit, or vanish, with it). An entry already written (same event id
    /// and endpoint: a retried batch) is skipped. The entry point for the store's write path.
    static func insert(_ entries: [WebhookOutboxEntry], into connection: SQLiteConnection) throws {
        for entry in entries {
            let event = entry.event
            try connection.run(SQL.insert, [
                .text(event.id), .text(entry.endpoint), .text(event.type.rawValue), .text(event.workspace),
                .text(event.orderingKey), event.revisions.map { .int($0.lowerBound) } ?? .null,
                event.revisions.map { .int($0.upperBound) } ?? .null, .text(JSONCodec.encodeString(event.data)),
                .int(event.createdAt), .int(entry.dueAt),
            ])
        }
    }

    public func insert(_ entries: [WebhookOutboxEntry]) throws {
        try connection.transaction { try Self.insert(entries, into: connection) }
    }

    // MARK: The engine's side

    public func claim(endpoint: String, limit: Int, now: Millis, owner: String, leaseMs: Int64, coalesceMs: Int64) throws
        -> [WebhookDelivery] {
        try connection.transaction {
            var heads: [Int64] = []
            try connection.forEachRow(SQL.claimable, [.text(endpoint), .int(now), .int(Int64(max(limit, 0)))]) { row in
                heads.append(row.int64(at: 0))
            }
            var claimed: [WebhookDelivery] = []
            for seq in heads {
                guard var delivery = try row(seq) else { continue }
                if delivery.event.type.coalesces, delivery.attempts == 0, coalesceMs > 0 {
                    var following: [WebhookDelivery] = []
                    try connection.forEachRow(SQL.following, [.text(endpoint), .text(delivery.event.orderingKey), .int(seq)]) { row throws(SQLiteError) in
                        following.append(try Self.delivery(row))
                    }
                    let (merged, absorbed) = WebhookCoalescing.fold(delivery, following, coalesceMs: coalesceMs)
                    for gone in absorbed { try connection.run(SQL.delete, [.int(gone)]) }
                    if !absorbed.isEmpty {
                        try connection.run(SQL.fold, [merged.event.revisions.map { .int($0.lowerBound) } ?? .null,
                                                      merged.event.revisions.map { .int($0.upperBound) } ?? .null,
                                                      .text(JSONCodec.encodeString(merged.event.data)), .int(Int64(merged.changes)),
                                                      .int(seq)])
                    }
                    delivery = merged
                }
                try connection.run(SQL.lease, [.text(owner), .int(now + leaseMs), .int(now), .int(seq)])
                delivery.attempts += 1
                delivery.firstAttemptAt = delivery.firstAttemptAt ?? now
                delivery.leaseOwner = owner
                delivery.leaseUntil = now + leaseMs
                claimed.append(delivery)
            }
            return claimed
        }
    }

    public func markDelivered(seq: Int64) throws {
        try connection.run(SQL.delete, [.int(seq)])
    }

    public func reschedule(seq: Int64, owner: String, at: Millis, status: Int?, error: String) throws -> Bool {
        try connection.run(SQL.reschedule, [.int(at), status.map { .int(Int64($0)) } ?? .null, .text(error), .int(seq), .text(owner)])
        return try connection.integer("SELECT changes()") == 1
    }

    public func deadLetter(seq: Int64, owner: String, at: Millis, status: Int?, error: String) throws -> Bool {
        try connection.run(SQL.deadLetter, [.int(at), status.map { .int(Int64($0)) } ?? .null, .text(error), .int(seq), .text(owner)])
        return try connection.integer("SELECT changes()") == 1
    }

    public func list(_ state: WebhookDelivery.State, limit: Int) throws -> [WebhookDelivery] {
        var rows: [WebhookDelivery] = []
        try connection.forEachRow(SQL.list, [.text(state.rawValue), .int(Int64(max(limit, 0)))]) { row throws(SQLiteError) in
            rows.append(try Self.delivery(row))
        }
        return rows
    }

    public func counts() throws -> (pending: Int, dead: Int) {
        let pending = try connection.integer("SELECT count(*) FROM webhook_outbox WHERE state = 'pending'") ?? 0
        let dead = try connection.integer("SELECT count(*) FROM webhook_outbox WHERE state = 'dead'") ?? 0
        return (Int(pending), Int(dead))
    }

    public func pendingEndpoints() throws -> [String] {
        var endpoints: [String] = []
        try connection.forEachRow("SELECT DISTINCT endpoint FROM webhook_outbox WHERE state = 'pending' ORDER BY endpoint") { row in
            if let endpoint = row.text(at: 0) { endpoints.append(endpoint) }
        }
        return endpoints
    }

    public func nextDue(now: Millis) throws -> Millis? {
        try connection.integer(SQL.nextDue)
    }

    public func requeue(seq: Int64, now: Millis) throws -> Bool {
        try connection.run(SQL.requeue, [.int(now), .int(seq)])
        return try connection.integer("SELECT changes()") == 1
    }

    private func row(_ seq: Int64) throws -> WebhookDelivery? {
        var found: WebhookDelivery?
        try connection.forEachRow(SQL.row, [.int(seq)]) { row throws(SQLiteError) in found = try Self.delivery(row) }
        return found
    }

    /// A row of `SQL.columns`.
    private static func delivery(_ row: SQLiteStatement) throws(SQLiteError) -> WebhookDelivery {
        let from = row.isNull(at: 6) ? nil : row.int64(at: 6)
        let to = row.isNull(at: 7) ? nil : row.int64(at: 7)
        let dataText = row.text(at: 8) ?? "{}"
        guard case .success(let data) = JSONCodec.decode(dataText, acceptingEquivalentKeys: true),
              let type = WebhookEventType(rawValue: row.text(at: 3) ?? "") else {
            throw SQLiteError(.sqlite(resultCode: SQLITE_CORRUPT), "webhook_outbox row \(row.int64(at: 0)) cannot be read", path: "")
        }
        let event = WebhookEvent(id: row.text(at: 1) ?? "", type: type, workspace: row.text(at: 4) ?? "",
                                 orderingKey: row.text(at: 5) ?? "", revisions: from.flatMap { from in to.map { from...max($0, from) } },
                                 data: data, createdAt: row.int64(at: 9))
        return WebhookDelivery(seq: row.int64(at: 0), endpoint: row.text(at: 2) ?? "", event: event,
                               state: WebhookDelivery.State(rawValue: row.text(at: 10) ?? "") ?? .pending,
                               attempts: Int(row.int64(at: 12)), nextAttemptAt: row.int64(at: 11),
                               firstAttemptAt: row.isNull(at: 13) ? nil : row.int64(at: 13), leaseOwner: row.text(at: 14),
                               leaseUntil: row.isNull(at: 15) ? nil : row.int64(at: 15),
                               lastStatus: row.isNull(at: 16) ? nil : Int(row.int64(at: 16)), lastError: row.text(at: 17),
                               changes: Int(row.int64(at: 18)))
    }

    private enum SQL {
        static let columns = """
            seq, event_id, endpoint, type, workspace, ordering_key, revision_from, revision_to, data, created_at, state, \
            next_attempt_at, attempts, first_attempt_at, lease_owner, lease_until, last_status, last_error, changes
            """
        static let insert = """
            INSERT INTO webhook_outbox (event_id, endpoint, type, workspace, ordering_key, revision_from, revision_to, data,
                                        created_at, next_attempt_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (endpoint, event_id) DO NOTHING
            """
        /// The first pending row of each ordering key (of one endpoint): the only ones that may
        /// go. Read from the `webhook_outbox_order` index alone, whatever is queued behind them.
        static let heads = """
            SELECT min(seq) AS seq FROM webhook_outbox WHERE endpoint = ?1 AND state = 'pending' GROUP BY ordering_key
            """
        static let claimable = """
            SELECT o.seq FROM webhook_outbox o JOIN (\(heads)) h ON o.seq = h.seq
            WHERE o.next_attempt_at <= ?2 AND (o.lease_until IS NULL OR o.lease_until < ?2)
            ORDER BY o.next_attempt_at, o.seq LIMIT ?3
            """
        static let following = """
            SELECT \(columns) FROM webhook_outbox
            WHERE endpoint = ?1 AND ordering_key = ?2 AND state = 'pending' AND seq > ?3 ORDER BY seq LIMIT 1000
            """
        static let row = "SELECT \(columns) FROM webhook_outbox WHERE seq = ?1"
        static let fold = "UPDATE webhook_outbox SET revision_from = ?1, revision_to = ?2, data = ?3, changes = ?4 WHERE seq = ?5"
        static let lease = """
            UPDATE webhook_outbox SET lease_owner = ?1, lease_until = ?2, attempts = attempts + 1,
                first_attempt_at = coalesce(first_attempt_at, ?3) WHERE seq = ?4
            """
        static let delete = "DELETE FROM webhook_outbox WHERE seq = ?1"
        static let reschedule = """
            UPDATE webhook_outbox SET next_attempt_at = ?1, last_status = ?2, last_error = ?3, lease_owner = NULL, lease_until = NULL
            WHERE seq = ?4 AND lease_owner = ?5 AND state = 'pending'
            """
        static let deadLetter = """
            UPDATE webhook_outbox SET state = 'dead', next_attempt_at = ?1, last_status = ?2, last_error = ?3, lease_owner = NULL,
                lease_until = NULL WHERE seq = ?4 AND lease_owner = ?5 AND state = 'pending'
            """
        static let list = "SELECT \(columns) FROM webhook_outbox WHERE state = ?1 ORDER BY seq LIMIT ?2"
        static let nextDue = """
            SELECT min(max(o.next_attempt_at, coalesce(o.lease_until, o.next_attempt_at))) FROM webhook_outbox o
            JOIN (SELECT min(seq) AS seq FROM webhook_outbox WHERE state = 'pending' GROUP BY endpoint, ordering_key) h
            ON o.seq = h.seq
            """
        static let requeue = """
            UPDATE webhook_outbox SET state = 'pending', next_attempt_at = ?1, first_attempt_at = NULL, lease_owner = NULL,
                lease_until = NULL WHERE seq = ?2 AND state = 'dead'
            """
    }
}
