/// Items with deadlines in any order (a binary min-heap), for deadlines that do not grow with
/// the clock, such as token expiries: a tick costs only what has expired, not one look at
/// every scene.
///
/// Entries are never removed early: when an item's deadline changes or it goes away, the
/// caller pushes the new deadline and ignores stale entries as they pop (checking the item's
/// current deadline), and rebuilds the queue when stale entries pile up.
struct DeadlineQueue<Item: Sendable>: Sendable {
    private var heap: [(deadline: Millis, item: Item)] = []

    var count: Int { heap.count }

    mutating func insert(_ item: Item, deadline: Millis) {
        heap.append((deadline, item))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the items whose deadline is at or before `now`, soonest first.
    mutating func popExpired(now: Millis) -> [Item] {
        var expired: [Item] = []
        while let first = heap.first, first.deadline <= now {
            expired.append(first.item)
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            siftDown(from: 0)
        }
        return expired
    }

    /// Drops every entry, for a rebuild.
    mutating func removeAll() {
        heap.removeAll(keepingCapacity: true)
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
