/// Where webhook events wait for delivery: written by the change that caused them, claimed by
/// the delivery engine, removed once delivered, kept once given up.
///
/// Rules every implementation keeps (`WebhookOutboxConformanceTests`):
/// - A delivery is claimable when it is pending, due, not leased (or its lease ran out), and
///   no earlier row (lower `seq`) of the same endpoint and ordering key is pending: a
///   document's events reach an endpoint one at a time, in order, and a given-up one no longer
///   holds the next back.
/// - A claim leases the row to one owner; two claimers (two nodes) never both get it while
///   the lease holds. A claim of a never-attempted document change first folds in the changes
///   after it (`WebhookCoalescing`), in the same transaction.
/// - Outcomes are fenced: `reschedule` and `deadLetter` change a row only while the caller
///   still holds its lease; `markDelivered` removes it whoever holds it (it arrived).
///
/// Writing rows in the transaction of the change they report is each store's own entry point
/// (`SQLiteWebhookOutbox.insert(_:into:)`, `PostgresWebhookOutbox.insert(_:on:)`); `insert` here
/// is for stores without transactions of their own and for tests. Used from one thread at a
/// time per instance (the engine's outbox thread).
public protocol WebhookOutbox: AnyObject {
    /// Writes entries; an entry whose event id is already stored for its endpoint is skipped.
    func insert(_ entries: [WebhookOutboxEntry]) throws

    /// Claims up to `limit` deliveries due at `now` for `endpoint`, oldest due first, leased to
    /// `owner` for `leaseMs`; each claimed row's `attempts` counts this attempt. A shared
    /// outbox may use its own clock for `now` and the lease (PostgreSQL uses the database's, so
    /// nodes' clocks need not agree).
    func claim(endpoint: String, limit: Int, now: Millis, owner: String, leaseMs: Int64, coalesceMs: Int64) throws
        -> [WebhookDelivery]

    /// The delivery arrived: its row goes.
    func markDelivered(seq: Int64) throws

    /// The attempt failed; tried again at `at`. Returns false when `owner` no longer held it.
    @discardableResult
    func reschedule(seq: Int64, owner: String, at: Millis, status: Int?, error: String) throws -> Bool

    /// Given up: kept as `dead` for inspection. Returns false when `owner` no longer held it.
    @discardableResult
    func deadLetter(seq: Int64, owner: String, at: Millis, status: Int?, error: String) throws -> Bool

    /// Deliveries in a state, oldest first, for inspection.
    func list(_ state: WebhookDelivery.State, limit: Int) throws -> [WebhookDelivery]

    /// Rows pending and dead.
    func counts() throws -> (pending: Int, dead: Int)

    /// Endpoints that have pending rows (to find rows of endpoints no longer configured).
    func pendingEndpoints() throws -> [String]

    /// The earliest time, in the caller's clock (`now` is its present), after which some pending
    /// row may be claimable (its due time, or its lease's end): when to look again without
    /// being told. Nil when nothing is pending.
    func nextDue(now: Millis) throws -> Millis?

    /// Puts a dead delivery back to be tried again now, its give-up clock reset (its attempts
    /// stay counted, so nothing is folded into it: its id keeps meaning the same body).
    /// Returns false when there is no such dead delivery.
    @discardableResult
    func requeue(seq: Int64, now: Millis) throws -> Bool
}
