/// Failed authentications per peer address (issue 26, item 5): a token bucket per address,
/// taken from by every refused credential (a `connect` or `refreshToken` whose token is not
/// valid) and looked at before a credential is checked, so an address that keeps failing is
/// refused before its tokens reach a signature check. Checking a token costs the server a
/// signature verification; refusing one unchecked costs it a dictionary lookup.
///
/// `burst` failures are allowed at once, then `perMinute` a minute. Only failures take from the
/// bucket: an address whose credentials are good is never slowed, however often it connects.
///
/// Memory is bounded: at most `capacity` addresses are remembered. An address whose bucket has
/// filled up again carries nothing and is forgotten first; when every remembered address is
/// still limited, the one nearest to being full again is forgotten (it gets a fresh burst). So
/// an attacker with more addresses than `capacity` gets more attempts than one address would,
/// but never more of the server's memory.
struct AuthFailureLimiter: Sendable {
    private struct Entry: Sendable {
        var tokens: Double
        var updatedAt: Millis
        /// When the bucket is full again, at the refill rate: the entry can be forgotten then.
        var fullAt: Millis
        /// The address was answered a refusal (429 or `rate_limited`) since its last checked
        /// failure: it knows when to come back, so coming back sooner is not worth an answer.
        var told = false
    }

    private let burst: Double
    /// Tokens per millisecond.
    private let rate: Double
    let capacity: Int
    private var entries: [Identifier: Entry] = [:]
    /// Addresses by when their bucket is full again; an address is pushed again at each failure
    /// (lazy deletion: only the entry's current `fullAt` counts).
    private var refills = DeadlineQueue<Identifier>()

    init(burst: Int, perMinute: Int, capacity: Int) {
        self.burst = Double(burst)
        self.rate = Double(perMinute) / 60_000
        self.capacity = capacity
    }

    /// Addresses remembered now.
    var count: Int { entries.count }

    /// Nil when `address` may have a credential checked now; otherwise how many milliseconds
    /// until it may.
    func refusal(_ address: String, now: Millis) -> Int? {
        guard let entry = entries[address] else { return nil }
        let tokens = refilled(entry, now: now)
        guard tokens < 1 else { return nil }
        return Int(((1 - tokens) / rate).rounded(.up))
    }

    /// `refusal`, and remembers that the address was answered it.
    mutating func refuse(_ address: String, now: Millis) -> Int? {
        guard let retryAfter = refusal(address, now: now) else { return nil }
        entries[Identifier(address)]?.told = true
        return retryAfter
    }

    /// Whether a new connection from `address` may be closed unread: it is still refused, and
    /// was already answered so (with when to come back) since its last checked failure.
    func ignoresItsRefusal(_ address: String, now: Millis) -> Bool {
        guard let entry = entries[address], entry.told else { return false }
        return refusal(address, now: now) != nil
    }

    /// A credential from `address` was refused: takes one token from its bucket.
    mutating func failed(_ address: String, now: Millis) {
        let key = Identifier(address)
        var entry: Entry
        if let known = entries[key] {
            entry = known
            entry.tokens = refilled(known, now: now)
        } else {
            if entries.count >= capacity { makeRoom(now: now) }
            entry = Entry(tokens: burst, updatedAt: now, fullAt: now)
        }
        entry.tokens = max(0, entry.tokens - 1)
        entry.updatedAt = now
        entry.told = false
        entry.fullAt = now + Millis(((burst - entry.tokens) / rate).rounded(.up))
        entries[key] = entry
        refills.push(key, at: entry.fullAt)
        // Pushes outnumber addresses under a flood; rebuild the heap now and then.
        if refills.count > 2 * entries.count + 1_024 {
            refills = DeadlineQueue()
            for (key, entry) in entries { refills.push(key, at: entry.fullAt) }
        }
    }

    private func refilled(_ entry: Entry, now: Millis) -> Double {
        min(burst, entry.tokens + Double(max(0, now - entry.updatedAt)) * rate)
    }

    /// Forgets the addresses whose bucket is full again; if none is, the one nearest to it.
    private mutating func makeRoom(now: Millis) {
        for (_, key) in refills.popDue(now: now) where (entries[key]?.fullAt ?? .max) <= now {
            entries[key] = nil
        }
        while entries.count >= capacity, let next = refills.nextDeadline {
            var evicted = false
            for (deadline, key) in refills.popDue(now: next) {
                guard let entry = entries[key], entry.fullAt == deadline else { continue }
                if evicted || entries.count < capacity {
                    refills.push(key, at: deadline)
                } else {
                    entries[key] = nil
                    evicted = true
                }
            }
        }
    }
}
