/// Connections with a deadline, in the order they were added. Deadlines only grow (the same
/// timeout is added to an increasing clock), so the expired ones are always at the front and
/// a tick costs only what has expired, not one look at every connection.
///
/// Entries of connections that no longer wait are dropped before the queue grows: a burst
/// of connects (10,000 idle scenes, a restart's storm) otherwise left an entry for every
/// connection until its deadline passed, 16 bytes each in an array grown to the next power of
/// two (~26 bytes an idle scene for `connectTimeoutMs` after the burst, issue 27). The queue
/// now grows only as far as connections really wait at once.
struct TimeoutQueue: Sendable {
    private var entries: [(connection: ConnectionID, deadline: Millis)] = []
    private var head = 0

    mutating func append(_ connection: ConnectionID, deadline: Millis) {
        entries.append((connection, deadline))
    }

    /// Below this many entries the queue grows as an array does (a small one is left as it is).
    static var compactingFrom: Int { 64 }

    /// Entries queued, expired ones not yet handed out included.
    var count: Int { entries.count - head }

    /// Whether the next `append` would grow the queue (from `compactingFrom` entries on): the
    /// moment to drop the entries that no longer matter (`dropSettled`) instead.
    var isFull: Bool { entries.count == entries.capacity && entries.count >= Self.compactingFrom }

    /// Drops the entries of connections whose deadline no longer matters (gone, or past their
    /// `connect`); the others keep their order. The array keeps its capacity when at most half
    /// of it is left, and doubles otherwise, so the next time it is full comes at least half a
    /// capacity of appends later: called when the queue is full, this looks at each entry O(1)
    /// times per append, amortised, however few connections settle.
    mutating func dropSettled(_ settled: (ConnectionID) -> Bool) {
        let capacity = entries.capacity
        var kept: [(connection: ConnectionID, deadline: Millis)] = []
        kept.reserveCapacity(capacity)
        for entry in entries[head...] where !settled(entry.connection) { kept.append(entry) }
        if kept.count * 2 > capacity { kept.reserveCapacity(capacity * 2) }
        entries = kept
        head = 0
    }

    /// Room for entries before the queue grows (for tests).
    var capacity: Int { entries.capacity }

    /// The earliest deadline still queued (it may belong to a connection that has connected
    /// since: waking for it costs one look).
    var nextDeadline: Millis? { head < entries.count ? entries[head].deadline : nil }

    /// Removes and returns the connections whose deadline has passed; the caller checks each
    /// is still waiting (most have connected long before).
    mutating func popExpired(now: Millis) -> [ConnectionID] {
        var expired: [ConnectionID] = []
        while head < entries.count, entries[head].deadline <= now {
            expired.append(entries[head].connection)
            head += 1
        }
        if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        if head == entries.count {
            // A burst of connects (a restart's storm) leaves no table its size behind.
            entries.removeAll(keepingCapacity: entries.capacity <= 1024)
            head = 0
        }
        return expired
    }
}
