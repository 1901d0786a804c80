/// Per-connection rate limit: `rate` requests a second sustained, `burst` at once.
public struct TokenBucket: Sendable {
    private var level: Level
    private var rate: Double
    private var burst: Double

    public init(rate: Int, burst: Int, now: Millis) {
        self.init(rate: Double(rate), burst: Double(burst), now: now)
    }

    public init(rate: Double, burst: Double, now: Millis) {
        self.rate = rate
        self.burst = burst
        self.level = Level(burst: burst, now: now)
    }

    /// A new rate and burst from now on (a node's share of a cluster's budget changed); the
    /// tokens there are are kept, up to the new burst.
    public mutating func rescale(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        level.cap(at: burst)
    }

    /// Whether it would be full at `now`: as good as a new one.
    public func isFull(now: Millis) -> Bool { level.isFull(now: now, rate: rate, burst: burst) }

    /// Takes one token, or says how long until one is there.
    public mutating func take(now: Millis) -> (allowed: Bool, retryAfterMs: Int) {
        level.take(now: now, rate: rate, burst: burst)
    }

    /// A bucket's tokens and when they were counted, without its rate and burst, which the
    /// caller passes: what each of the hub's connections keeps, since they all share the
    /// settings' `rateLimitPerSecond` and `rateLimitBurst` (a copy of both in every connection
    /// was 16 bytes of every idle scene).
    public struct Level: Sendable {
        private var tokens: Double
        private var updatedAt: Millis

        /// Full: `burst` tokens at `now`.
        public init(burst: Double, now: Millis) {
            tokens = burst
            updatedAt = now
        }

        public func isFull(now: Millis, rate: Double, burst: Double) -> Bool {
            tokens + Double(max(0, now - updatedAt)) * rate / 1000 >= burst
        }

        public mutating func take(now: Millis, rate: Double, burst: Double) -> (allowed: Bool, retryAfterMs: Int) {
            tokens = min(burst, tokens + Double(max(0, now - updatedAt)) * rate / 1000)
            updatedAt = now
            if tokens >= 1 {
                tokens -= 1
                return (true, 0)
            }
            return (false, Int(((1 - tokens) * 1000 / rate).rounded(.up)))
        }

        mutating func cap(at burst: Double) { tokens = min(tokens, burst) }
    }
}
