/// Connections with a deadline, in the order they were added. Deadlines only grow (the same
/// timeout is added to an increasing clock), so the expired ones are always at the front and
/// a tick costs only what has expired, not one look at every connection.
struct TimeoutQueue: Sendable {
    private var entries: [(connection: ConnectionID, deadline: Millis)] = []
    private var head = 0

    mutating func append(_ connection: ConnectionID, deadline: Millis) {
        entries.append((connection, deadline))
    }

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
