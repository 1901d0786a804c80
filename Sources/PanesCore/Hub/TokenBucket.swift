/// Per-connection rate limit: `rate` requests a second sustained, `burst` at once.
public struct TokenBucket: Sendable {
    private var tokens: Double
    private var updatedAt: Millis
    private let rate: Double
    private let burst: Double

    public init(rate: Int, burst: Int, now: Millis) {
        self.rate = Double(rate)
        self.burst = Double(burst)
        self.tokens = Double(burst)
        self.updatedAt = now
    }

    /// Takes one token, or says how long until one is there.
    public mutating func take(now: Millis) -> (allowed: Bool, retryAfterMs: Int) {
        tokens = min(burst, tokens + Double(max(0, now - updatedAt)) * rate / 1000)
        updatedAt = now
        if tokens >= 1 {
            tokens -= 1
            return (true, 0)
        }
        return (false, Int(((1 - tokens) * 1000 / rate).rounded(.up)))
    }
}
