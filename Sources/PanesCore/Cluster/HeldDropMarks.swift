/// The sessions whose held drops (`HeldDrop`) a node reads at their next attach there
/// (`ClusterState.heldDropsToRead`), at most `limit` of them: marking one more forgets the
/// oldest mark. A forgotten mark loses no drop: its rows stay in the store until
/// `heldDropKeptMs`, and every attach in a cluster claims its session first, a claim that finds
/// them again (`Hub.heldDropsFound`), on this node or any other.
///
/// Marks are kept in the order made (a mark made again moves to the end): a dictionary to the
/// mark's number, and the numbers in order, where a removed or remade mark leaves a stale entry
/// that is skipped (and compacted away once entries are more than twice the marks).
struct HeldDropMarks: Sendable {
    private var marks: [SessionID: UInt64] = [:]
    private var order: [(number: UInt64, session: SessionID)] = []
    private var start = 0
    private var made: UInt64 = 0

    var isEmpty: Bool { marks.isEmpty }
    var count: Int { marks.count }

    func contains(_ session: SessionID) -> Bool { marks[session] != nil }

    /// Marks `session`, keeping at most `limit` marks.
    /// - Returns: how many older marks were forgotten to make room (0 or 1).
    mutating func insert(_ session: SessionID, limit: Int) -> Int {
        made += 1
        marks[session] = made
        order.append((made, session))
        var forgotten = 0
        while marks.count > max(limit, 0), start < order.count {
            let oldest = order[start]
            start += 1
            if marks[oldest.session] == oldest.number {
                marks[oldest.session] = nil
                forgotten += 1
            }
        }
        compact()
        return forgotten
    }

    /// Unmarks `session`; true when it was marked.
    @discardableResult
    mutating func remove(_ session: SessionID) -> Bool {
        guard marks.removeValue(forKey: session) != nil else { return false }
        compact()
        return true
    }

    private mutating func compact() {
        // Entries already passed count too: the array is what is kept.
        guard order.count > 64, order.count > 2 * marks.count else { return }
        order = order[start...].filter { marks[$0.session] == $0.number }
        start = 0
    }
}
