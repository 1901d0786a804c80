/// The pause before retrying something that failed because a dependency (the shared store) is
/// down: `minMs` after the first failure, doubling after each further one up to `maxMs`, and
/// back to nothing after a success. Every loop that retries while PostgreSQL is away uses one
/// (the hub's reads, the store thread's held writes, the listener's reconnects), so a node
/// stays quiet and cheap through an outage of any length (the README's "50 → 2,000 ms").
public struct Backoff: Sendable, Equatable {
    public let minMs: Millis
    public let maxMs: Millis
    /// The pause the last failure set; nil while nothing is failing.
    public private(set) var currentMs: Millis?

    public init(minMs: Millis, maxMs: Millis) {
        precondition(minMs > 0 && maxMs >= minMs, "a backoff needs 0 < minMs <= maxMs")
        self.minMs = minMs
        self.maxMs = maxMs
    }

    /// The shared store's: 50 ms, doubling up to 2 s.
    public static let sharedStore = Backoff(minMs: 50, maxMs: 2_000)

    public var isFailing: Bool { currentMs != nil }

    /// Notes a failure; returns how long to wait before the next try.
    @discardableResult
    public mutating func failed() -> Millis {
        let next = currentMs.map { min($0 * 2, maxMs) } ?? minMs
        currentMs = next
        return next
    }

    /// The pause `failed()` returns at the `failures`th failure in a row (1 for the first),
    /// for a caller that keeps the count itself, one per key.
    public func pause(afterFailures failures: Int) -> Millis {
        min(minMs << Millis(min(max(failures - 1, 0), 20)), maxMs)
    }

    /// Notes a success: the next failure starts again from `minMs`.
    public mutating func succeeded() {
        currentMs = nil
    }
}
