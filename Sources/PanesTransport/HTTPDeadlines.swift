/// When each awaited API request times out, in the order they were handed to the delegate.
///
/// Every request gets the same `httpResponseTimeoutMs`, so handing-over order is deadline
/// order: a queue, whose head is always the next deadline, with no sorting and no timer per
/// request. Answered requests stay in it until they reach the head, where they are skipped.
struct HTTPDeadlines {
    private var entries: [(deadline: UInt64, id: UInt64)] = []
    private var head = 0

    mutating func append(_ id: UInt64, deadline: UInt64) {
        entries.append((deadline, id))
    }

    var nextDeadline: UInt64? {
        head < entries.count ? entries[head].deadline : nil
    }

    /// Removes and returns the ids whose deadline is at or before `now`.
    mutating func expire(at now: UInt64) -> [UInt64] {
        var due: [UInt64] = []
        while head < entries.count, entries[head].deadline <= now {
            due.append(entries[head].id)
            head += 1
        }
        // Reclaim the consumed front once it is the larger part.
        if head > 64, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        return due
    }

    var count: Int { entries.count - head }
}
