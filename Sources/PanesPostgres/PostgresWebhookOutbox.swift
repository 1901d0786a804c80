// Threading: an outbox owns its own connection, used by one thread (the webhook engine's
// outbox thread). The static `insert(_:on:)` runs on whatever thread holds the connection it is
// given: the store thread, inside the transaction of the change the events report.
public import PanesCore
internal import PanesJSON

/// The webhook outbox in PostgreSQL (migration 7's `webhook_outbox`), shared by every node:
/// events are written by the store in the transaction of the change they report
/// (`insert(_:on:)`), and each node's delivery engine claims through a connection of its own.
///
/// A claim takes due rows `FOR UPDATE SKIP LOCKED` and leases them to the node in the same
/// transaction, so of several nodes claiming at once each row goes to exactly one; a row whose
/// earlier rows (same endpoint and ordering key) are still pending is not claimable at all.
/// Leases and due times are compared with the database's clock, so nodes' clocks need not
/// agree for a delivery to go to one node at a time (a retry's time is the clock of the node
/// that scheduled it).
///
/// `@unchecked Sendable` because it is created on one thread and handed to the engine's outbox
/// thread once; only that thread uses it afterwards.
public final class PostgresWebhookOutbox: WebhookOutbox, @unchecked Sendable {
    let connection: PostgresConnection

    /// Connects to a database the store already migrated (open the store first).
    public init(url: String) throws {
        connection = try PostgresConnection(url: url)
        // No statement of the outbox thread may wait without end (a lock another transaction
        // holds, a server that stopped answering): it fails, the engine tries again after its
        // poll, and `WebhookEngine.stop()` never waits on it for long. (One of the engine's
        // tests hung in `nextDue` without this.)
        connection.setUp = ["SET statement_timeout = 10000", "SET lock_timeout = 5000"]  // again on each reconnect
        try connection.execute(connection.setUp.joined(separator: "; "))
        guard try connection.integer("SELECT count(*) FROM pg_tables WHERE tablename = 'webhook_outbox'") == 1 else {
            throw PostgresError(.invalidRequest, "the database has no webhook outbox yet: open the store (which migrates it) first")
        }
    }

    /// Migration 7.
    static let schema = """
        -- One row per event per endpoint that wants it, written in the transaction of the change
        -- it reports; deleted once delivered, kept as 'dead' once given up on. For one endpoint
        -- and ordering key, rows are delivered one at a time in seq order. Times are bigint
        -- milliseconds since the epoch, as everywhere here.
        CREATE TABLE webhook_outbox (
            seq bigserial PRIMARY KEY,
            event_id text COLLATE "C" NOT NULL,
            endpoint text COLLATE "C" NOT NULL,
            type text NOT NULL,
            workspace text COLLATE "C" NOT NULL,
            ordering_key text COLLATE "C" NOT NULL,
            revision_from bigint,            -- a document change's range, NULL otherwise
            revision_to bigint,
            data text NOT NULL,              -- JSON object
            created_at bigint NOT NULL,
            state text NOT NULL DEFAULT 'pending',   -- 'pending' or 'dead'
            next_attempt_at bigint NOT NULL,
            attempts bigint NOT NULL DEFAULT 0,
            first_attempt_at bigint,
            lease_owner text,
            lease_until bigint,
            last_status bigint,
            last_error text,
            changes bigint NOT NULL DEFAULT 1,
            UNIQUE (endpoint, event_id)
        );
        CREATE INDEX webhook_outbox_order ON webhook_outbox (endpoint, ordering_key, seq) WHERE state = 'pending';
        CREATE INDEX webhook_outbox_due ON webhook_outbox (endpoint, next_attempt_at) WHERE state = 'pending';
        """

    // MARK: Writing, inside the change's transaction

    /// Writes the entries with `connection`, which must be inside the transaction of the change
    /// they report (so they commit, or vanish, with it): queued in its pipeline, they travel
    /// with its next round trip. An entry already written (same event id and endpoint: a
    /// retried batch) is skipped. The entry point for the store's write path.
    static func insert(_ entries: [WebhookOutboxEntry], on connection: PostgresConnection) throws {
        for entry in entries {
            let event = entry.event
            try connection.send(SQL.insert, [
                .text(event.id), .text(entry.endpoint), .text(event.type.rawValue), .text(event.workspace),
                .text(event.orderingKey), event.revisions.map { .int($0.lowerBound) } ?? .null,
                event.revisions.map { .int($0.upperBound) } ?? .null, .text(JSONCodec.encodeString(event.data)),
                .int(event.createdAt), .int(entry.dueAt),
            ])
        }
    }

    public func insert(_ entries: [WebhookOutboxEntry]) throws {
        try connection.transaction { try Self.insert(entries, on: connection) }
    }

    // MARK: The engine's side

    public func claim(endpoint: String, limit: Int, now: Millis, owner: String, leaseMs: Int64, coalesceMs: Int64) throws
        -> [WebhookDelivery] {
        try connection.transaction {
            let heads = try connection.query(SQL.claimable, [.text(endpoint), .int(Int64(max(limit, 0)))])
            var claimed: [WebhookDelivery] = []
            for index in 0..<heads.count {
                var delivery = try Self.delivery(heads, index)
                if delivery.event.type.coalesces, delivery.attempts == 0, coalesceMs > 0 {
                    let rows = try connection.query(SQL.following, [.text(endpoint), .text(delivery.event.orderingKey), .int(delivery.seq)])
                    let following = try (0..<rows.count).map { try Self.delivery(rows, $0) }
                    let (merged, absorbed) = WebhookCoalescing.fold(delivery, following, coalesceMs: coalesceMs)
                    if !absorbed.isEmpty {
                        for gone in absorbed { try connection.send(SQL.delete, [.int(gone)]) }
                        try connection.send(SQL.fold, [merged.event.revisions.map { .int($0.lowerBound) } ?? .null,
                                                       merged.event.revisions.map { .int($0.upperBound) } ?? .null,
                                                       .text(JSONCodec.encodeString(merged.event.data)), .int(Int64(merged.changes)),
                                                       .int(delivery.seq)])
                    }
                    delivery = merged
                }
                let leased = try connection.query(SQL.lease, [.text(owner), .int(leaseMs), .int(delivery.seq)])
                delivery.attempts += 1
                delivery.leaseOwner = owner
                delivery.firstAttemptAt = leased.optionalInt64(0, 0)
                delivery.leaseUntil = leased.optionalInt64(0, 1)
                claimed.append(delivery)
            }
            return claimed
        }
    }

    public func markDelivered(seq: Int64) throws {
        try connection.query(SQL.delete, [.int(seq)])
    }

    public func reschedule(seq: Int64, owner: String, at: Millis, status: Int?, error: String) throws -> Bool {
        try connection.query(SQL.reschedule, [.int(at), status.map { .int(Int64($0)) } ?? .null, .text(error), .int(seq),
                                              .text(owner)]).affected == 1
    }

    public func deadLetter(seq: Int64, owner: String, at: Millis, status: Int?, error: String) throws -> Bool {
        try connection.query(SQL.deadLetter, [.int(at), status.map { .int(Int64($0)) } ?? .null, .text(error), .int(seq),
                                              .text(owner)]).affected == 1
    }

    public func list(_ state: WebhookDelivery.State, limit: Int) throws -> [WebhookDelivery] {
        let rows = try connection.query(SQL.list, [.text(state.rawValue), .int(Int64(max(limit, 0)))])
        return try (0..<rows.count).map { try Self.delivery(rows, $0) }
    }

    public func counts() throws -> (pending: Int, dead: Int) {
        let rows = try connection.query(SQL.counts)
        return (Int(rows.int64(0, 0)), Int(rows.int64(0, 1)))
    }

    public func pendingEndpoints() throws -> [String] {
        let rows = try connection.query("SELECT DISTINCT endpoint FROM webhook_outbox WHERE state = 'pending' ORDER BY endpoint")
        return (0..<rows.count).compactMap { rows.text($0, 0) }
    }

    /// In the caller's clock: the database's times are shifted by how far its clock is from
    /// the node's, so the engine waits the right length of time.
    public func nextDue(now: Millis) throws -> Millis? {
        let rows = try connection.query(SQL.nextDue)
        guard rows.count == 1, let due = rows.optionalInt64(0, 0) else { return nil }
        return due - rows.int64(0, 1) + now
    }

    public func requeue(seq: Int64, now: Millis) throws -> Bool {
        try connection.query(SQL.requeue, [.int(seq)]).affected == 1
    }

    /// A row of `SQL.columns`.
    private static func delivery(_ rows: PostgresRows, _ index: Int) throws -> WebhookDelivery {
        guard case .success(let data) = JSONCodec.decode(rows.text(index, 8) ?? "{}", acceptingEquivalentKeys: true),
              let type = WebhookEventType(rawValue: rows.text(index, 3) ?? "") else {
            throw PostgresError(.unexpectedResult, "webhook_outbox row \(rows.int64(index, 0)) cannot be read")
        }
        let from = rows.optionalInt64(index, 6)
        let to = rows.optionalInt64(index, 7)
        let event = WebhookEvent(id: rows.text(index, 1) ?? "", type: type, workspace: rows.text(index, 4) ?? "",
                                 orderingKey: rows.text(index, 5) ?? "", revisions: from.flatMap { from in to.map { from...max($0, from) } },
                                 data: data, createdAt: rows.int64(index, 9))
        return WebhookDelivery(seq: rows.int64(index, 0), endpoint: rows.text(index, 2) ?? "", event: event,
                               state: WebhookDelivery.State(rawValue: rows.text(index, 10) ?? "") ?? .pending,
                               attempts: Int(rows.int64(index, 12)), nextAttemptAt: rows.int64(index, 11),
                               firstAttemptAt: rows.optionalInt64(index, 13), leaseOwner: rows.text(index, 14),
                               leaseUntil: rows.optionalInt64(index, 15), lastStatus: rows.optionalInt64(index, 16).map { Int($0) },
                               lastError: rows.text(index, 17), changes: Int(rows.int64(index, 18)))
    }

    private enum SQL {
        static let nowMs = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
        static let columns = """
            seq, event_id, endpoint, type, workspace, ordering_key, revision_from, revision_to, data, created_at, state, \
            next_attempt_at, attempts, first_attempt_at, lease_owner, lease_until, last_status, last_error, changes
            """
        static let insert = """
            INSERT INTO webhook_outbox (event_id, endpoint, type, workspace, ordering_key, revision_from, revision_to, data,
                                        created_at, next_attempt_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (endpoint, event_id) DO NOTHING
            """
        /// The first pending row of each ordering key (of one endpoint): the only ones that may
        /// go. Read from the `webhook_outbox_order` index, whatever is queued behind them.
        static let heads = """
            SELECT min(seq) AS seq FROM webhook_outbox WHERE endpoint = $1 AND state = 'pending' GROUP BY ordering_key
            """
        /// A head another node is claiming is locked, so skipped; one it claimed is leased. The
        /// lock is re-checked against the row's latest version, lease and state included.
        static let claimable = """
            SELECT o.seq, o.event_id, o.endpoint, o.type, o.workspace, o.ordering_key, o.revision_from, o.revision_to, o.data,
                o.created_at, o.state, o.next_attempt_at, o.attempts, o.first_attempt_at, o.lease_owner, o.lease_until,
                o.last_status, o.last_error, o.changes
            FROM webhook_outbox o JOIN (\(heads)) h ON o.seq = h.seq
            WHERE o.state = 'pending' AND o.next_attempt_at <= \(nowMs) AND (o.lease_until IS NULL OR o.lease_until < \(nowMs))
            ORDER BY o.next_attempt_at, o.seq LIMIT $2
            FOR UPDATE OF o SKIP LOCKED
            """
        static let following = """
            SELECT \(columns) FROM webhook_outbox
            WHERE endpoint = $1 AND ordering_key = $2 AND state = 'pending' AND seq > $3 ORDER BY seq LIMIT 1000 FOR UPDATE
            """
        static let fold = "UPDATE webhook_outbox SET revision_from = $1, revision_to = $2, data = $3, changes = $4 WHERE seq = $5"
        static let lease = """
            UPDATE webhook_outbox SET lease_owner = $1, lease_until = \(nowMs) + $2, attempts = attempts + 1,
                first_attempt_at = coalesce(first_attempt_at, \(nowMs)) WHERE seq = $3 RETURNING first_attempt_at, lease_until
            """
        static let delete = "DELETE FROM webhook_outbox WHERE seq = $1"
        static let reschedule = """
            UPDATE webhook_outbox SET next_attempt_at = $1, last_status = $2, last_error = $3, lease_owner = NULL, lease_until = NULL
            WHERE seq = $4 AND lease_owner = $5 AND state = 'pending'
            """
        static let deadLetter = """
            UPDATE webhook_outbox SET state = 'dead', next_attempt_at = $1, last_status = $2, last_error = $3, lease_owner = NULL,
                lease_until = NULL WHERE seq = $4 AND lease_owner = $5 AND state = 'pending'
            """
        static let list = "SELECT \(columns) FROM webhook_outbox WHERE state = $1 ORDER BY seq LIMIT $2"
        static let counts = """
            SELECT count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'dead') FROM webhook_outbox
            """
        static let nextDue = """
            SELECT min(greatest(o.next_attempt_at, coalesce(o.lease_until, o.next_attempt_at))), \(nowMs) FROM webhook_outbox o
            JOIN (SELECT min(seq) AS seq FROM webhook_outbox WHERE state = 'pending' GROUP BY endpoint, ordering_key) h
            ON o.seq = h.seq
            """
        static let requeue = """
            UPDATE webhook_outbox SET state = 'pending', next_attempt_at = \(nowMs), first_attempt_at = NULL, lease_owner = NULL,
                lease_until = NULL WHERE seq = $1 AND state = 'dead'
            """
    }
}
