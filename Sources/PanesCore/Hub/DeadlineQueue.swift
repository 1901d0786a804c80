/// Keys with deadlines, earliest first (a binary heap). Entries are never updated in place:
/// a key whose deadline moved is pushed again, and whoever pops an entry checks it is still
/// due (lazy deletion). So every operation is O(log n), and the hub can tell the runtime
/// exactly when it next has work, instead of waking up on a fixed tick.
struct DeadlineQueue<Key: Sendable>: Sendable {
    private var heap: [(deadline: Millis, key: Key)] = []

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    /// The earliest deadline, if any.
    var nextDeadline: Millis? { heap.first?.deadline }

    mutating func push(_ key: Key, at deadline: Millis) {
        heap.append((deadline, key))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the entries due at `now`, earliest first.
    mutating func popDue(now: Millis) -> [(deadline: Millis, key: Key)] {
        var due: [(deadline: Millis, key: Key)] = []
        while let first = heap.first, first.deadline <= now {
            due.append(first)
            let last = heap.removeLast()
            guard !heap.isEmpty else { break }
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
                if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
                guard smallest != parent else { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return due
    }
}
