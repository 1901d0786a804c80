/// When a failed delivery is tried again: exponential backoff with jitter, after a schedule
/// like Standard Webhooks' (seconds, minutes, hours, up to a day apart), until
/// `webhookGiveUpMs` after the first attempt.
public struct WebhookRetryPolicy: Sendable, Equatable {
    /// The wait after the first failure; each next one is `growth` times longer.
    public var firstMs: Int64
    public var maxMs: Int64
    public var giveUpMs: Int64
    public static let growth: Int64 = 4

    public init(firstMs: Int64, maxMs: Int64, giveUpMs: Int64) {
        self.firstMs = max(firstMs, 1)
        self.maxMs = max(maxMs, self.firstMs)
        self.giveUpMs = giveUpMs
    }

    public init(settings: Settings) {
        self.init(firstMs: Int64(settings.webhookRetryFirstMs), maxMs: Int64(settings.webhookRetryMaxMs),
                  giveUpMs: Int64(settings.webhookGiveUpMs))
    }

    public enum Decision: Sendable, Equatable {
        case retry(at: Millis)
        case giveUp
    }

    /// After attempt number `attempts` (1: the first) failed at `now`.
    /// - Parameters:
    ///   - retryAfterMs: the receiver's `Retry-After`, if it sent one: no retry before it.
    ///   - jitter: a random number in 0..<1; the wait is between half of the backoff and all of it.
    public func next(afterAttempt attempts: Int, firstAttemptAt: Millis, now: Millis, retryAfterMs: Int64? = nil,
                     jitter: Double) -> Decision {
        let deadline = firstAttemptAt + giveUpMs
        guard now < deadline else { return .giveUp }
        var backoff = firstMs
        for _ in 1..<max(attempts, 1) {
            backoff = backoff > maxMs / Self.growth ? maxMs : backoff * Self.growth
        }
        backoff = min(backoff, maxMs)
        var wait = backoff / 2 + Int64(Double(backoff - backoff / 2) * min(max(jitter, 0), 1))
        if let retryAfterMs { wait = max(wait, min(retryAfterMs, maxMs)) }
        // The last attempt is made at the deadline rather than skipped.
        return .retry(at: min(now + max(wait, 1), deadline))
    }
}
