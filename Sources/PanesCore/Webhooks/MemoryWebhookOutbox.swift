import Synchronization

/// The outbox in memory: for tests and `--store memory`. Not durable. A lock makes it safe to
/// share between two engines (two "nodes" in a test) and a writer.
public final class MemoryWebhookOutbox: WebhookOutbox, Sendable {
    private struct State {
        var rows: [Int64: WebhookDelivery] = [:]
        var nextSeq: Int64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public func insert(_ entries: [WebhookOutboxEntry]) {
        state.withLock { state in
            for entry in entries {
                guard !state.rows.values.contains(where: { $0.endpoint == entry.endpoint && $0.event.id == entry.event.id }) else {
                    continue
                }
                state.nextSeq += 1
                state.rows[state.nextSeq] = WebhookDelivery(seq: state.nextSeq, endpoint: entry.endpoint, event: entry.event,
                                                            nextAttemptAt: entry.dueAt)
            }
        }
    }

    public func claim(endpoint: String, limit: Int, now: Millis, owner: String, leaseMs: Int64, coalesceMs: Int64)
        -> [WebhookDelivery] {
        state.withLock { state in
            let pending = state.rows.values.filter { Identifier.equal($0.endpoint, endpoint) && $0.state == .pending }
                .sorted { $0.seq < $1.seq }
            var heads: [Identifier: WebhookDelivery] = [:]  // ordering keys hold ids: by bytes
            for row in pending where heads[row.event.orderingKey] == nil { heads[row.event.orderingKey] = row }
            let due = heads.values.filter { $0.nextAttemptAt <= now && ($0.leaseUntil ?? Millis.min) < now }
                .sorted { ($0.nextAttemptAt, $0.seq) < ($1.nextAttemptAt, $1.seq) }
                .prefix(max(limit, 0))
            return due.map { head in
                let following = pending.filter {
                    Identifier.equal($0.event.orderingKey, head.event.orderingKey) && $0.seq > head.seq
                }
                var (claimed, absorbed) = WebhookCoalescing.fold(head, following, coalesceMs: coalesceMs)
                for seq in absorbed { state.rows[seq] = nil }
                claimed.attempts += 1
                claimed.firstAttemptAt = claimed.firstAttemptAt ?? now
                claimed.leaseOwner = owner
                claimed.leaseUntil = now + leaseMs
                state.rows[claimed.seq] = claimed
                return claimed
            }
        }
    }

    public func markDelivered(seq: Int64) {
        _ = state.withLock { $0.rows.removeValue(forKey: seq) }
    }

    public func reschedule(seq: Int64, owner: String, at: Millis, status: Int?, error: String) -> Bool {
        release(seq, owner: owner, as: .pending, at: at, status: status, error: error)
    }

    public func deadLetter(seq: Int64, owner: String, at: Millis, status: Int?, error: String) -> Bool {
        release(seq, owner: owner, as: .dead, at: at, status: status, error: error)
    }

    /// An attempt's outcome, when `owner` still holds the row.
    private func release(_ seq: Int64, owner: String, as outcome: WebhookDelivery.State, at: Millis, status: Int?,
                         error: String) -> Bool {
        state.withLock { state in
            guard var row = state.rows[seq], row.state == .pending, row.leaseOwner == owner else { return false }
            row.state = outcome
            row.nextAttemptAt = at
            row.leaseOwner = nil
            row.leaseUntil = nil
            row.lastStatus = status
            row.lastError = error
            state.rows[seq] = row
            return true
        }
    }

    public func list(_ wanted: WebhookDelivery.State, limit: Int) -> [WebhookDelivery] {
        state.withLock { state in
            Array(state.rows.values.filter { $0.state == wanted }.sorted { $0.seq < $1.seq }.prefix(max(limit, 0)))
        }
    }

    public func counts() -> (pending: Int, dead: Int) {
        state.withLock { state in
            (state.rows.values.count { $0.state == .pending }, state.rows.values.count { $0.state == .dead })
        }
    }

    public func pendingEndpoints() -> [String] {
        state.withLock { state in Set(state.rows.values.filter { $0.state == .pending }.map(\.endpoint)).sorted() }
    }

    public func nextDue(now: Millis) -> Millis? {
        state.withLock { state in
            // Only the first pending row of each endpoint and key can become claimable.
            var heads: [Identifier: WebhookDelivery] = [:]  // ordering keys hold ids: by bytes
            for row in state.rows.values.filter({ $0.state == .pending }).sorted(by: { $0.seq < $1.seq }) {
                let key = "\(row.endpoint.utf8.count):\(row.endpoint)/\(row.event.orderingKey)"
                if heads[key] == nil { heads[key] = row }
            }
            return heads.values.map { max($0.nextAttemptAt, $0.leaseUntil ?? Millis.min) }.min()
        }
    }

    public func requeue(seq: Int64, now: Millis) -> Bool {
        state.withLock { state in
            guard var row = state.rows[seq], row.state == .dead else { return false }
            // Its attempts stay counted: a delivery once attempted is never folded again, so its
            // id keeps meaning the same body.
            row.state = .pending
            row.nextAttemptAt = now
            row.firstAttemptAt = nil
            state.rows[seq] = row
            return true
        }
    }
}
