/// A document's text as a balanced tree of UTF-8 chunks (a rope), so that an edit costs
/// O(log n) however long the text is, and a copy costs nothing.
///
/// Positions count Unicode scalars, as operations do (see `TextOperation`). Every node knows
/// how many bytes, scalars and UTF-16 units lie under it, so finding a position walks one
/// path from the root, and the lengths are read off the root.
///
/// Nodes are immutable and shared (see `RopeNode`): a copy of a rope is one reference, an
/// edit makes O(log n) new nodes and leaves every other rope that shares the old ones as it
/// was. So a rope may be handed to another thread (to be written to the store, say) while
/// the document goes on changing. Only reading the whole text, `String(rope)`, costs O(n).
public struct Rope: Sendable {
    var root: RopeNode

    /// The empty text.
    public init() {
        root = .empty
    }

    /// The rope of `text`, in O(n).
    public init(_ text: String) {
        root = text.utf8.count <= RopeNode.maxLeafBytes ? RopeNode(leaf: text) : Self.tree(ofLarge: text)
    }

    init(root: RopeNode) {
        self.root = root
    }

    /// The length in Unicode scalars: the unit of document positions. O(1).
    public var scalarCount: Int { root.summary.scalars }
    /// The length in UTF-8 bytes. O(1).
    public var utf8Count: Int { root.summary.utf8 }
    /// The length in UTF-16 code units, as JavaScript counts. O(1).
    public var utf16Count: Int { root.summary.utf16 }
    public var isEmpty: Bool { root.isEmpty }

    /// Replaces the scalars at offsets `range` with `text`: O(log n + text), whatever the
    /// length of the range.
    /// - Precondition: `range` lies within `0...scalarCount`.
    public mutating func replace(_ range: Range<Int>, with text: String) {
        replace(range, with: text, counted: RopeSummary(text))
    }

    /// `replace(_:with:)` for a caller that has counted `text` already.
    mutating func replace(_ range: Range<Int>, with text: String, counted inserted: RopeSummary) {
        precondition(range.lowerBound >= 0 && range.upperBound <= scalarCount,
                     "range \(range) is outside the rope's 0...\(scalarCount) scalars")
        if range.isEmpty && inserted.utf8 == 0 { return }
        // Most edits (typing, deleting a little) stay inside one leaf: copy the leaf and its path.
        if let replaced = RopeNode.replacingWithinLeaf(root, range, with: text, counted: inserted, isRoot: true) {
            root = replaced
            return
        }
        let (before, rest) = RopeNode.split(root, at: range.lowerBound)
        let after = RopeNode.split(rest, at: range.count).1
        root = RopeNode.join(RopeNode.join(before, Self.tree(of: text, summary: inserted)), after)
    }

    /// A balanced tree holding `text`: full leaves, then full inner nodes, level by level.
    static func tree(of text: String, summary: RopeSummary) -> RopeNode {
        summary.utf8 <= RopeNode.maxLeafBytes ? RopeNode(leaf: text, summary: summary) : tree(ofLarge: text)
    }

    /// `tree(of:summary:)` for more than one leaf of text, counting each leaf as it is cut.
    private static func tree(ofLarge text: String) -> RopeNode {
        var level = text.withUTF8Buffer { leaves(of: $0) }
        while level.count > 1 {
            level = evenGroups(of: level, atMost: RopeNode.maxChildren).map { RopeNode(children: Array($0)) }
        }
        return level[0]
    }

    /// Cuts `bytes` into leaves of nearly equal size, each at most `maxLeafBytes` and, when
    /// there are several, at least half of that. Cuts fall on scalar boundaries, which may
    /// move a cut back by up to three bytes; aiming 64 bytes under the limit absorbs that.
    private static func leaves(of bytes: UnsafeBufferPointer<UInt8>) -> [RopeNode] {
        var remaining = (bytes.count + RopeNode.maxLeafBytes - 65) / (RopeNode.maxLeafBytes - 64)
        var leaves: [RopeNode] = []
        leaves.reserveCapacity(remaining)
        var start = 0
        while remaining > 0 {
            let share = (bytes.count - start + remaining - 1) / remaining
            let end = remaining == 1 ? bytes.count : bytes.scalarBoundary(atOrBefore: start + share)
            let chunk = UnsafeBufferPointer(rebasing: bytes[start..<end])
            leaves.append(RopeNode(leaf: String(decoding: chunk, as: UTF8.self), summary: RopeSummary(chunk)))
            start = end
            remaining -= 1
        }
        return leaves
    }

    /// `items` in consecutive groups of at most `limit`, as few groups as that allows, with
    /// sizes differing by at most one (so each holds more than `limit / 2` when there are several).
    static func evenGroups<T>(of items: [T], atMost limit: Int) -> [ArraySlice<T>] {
        let groups = (items.count + limit - 1) / limit
        guard groups > 1 else { return [items[...]] }
        var result: [ArraySlice<T>] = []
        var start = 0
        for group in 0..<groups {
            let size = items.count / groups + (group < items.count % groups ? 1 : 0)
            result.append(items[start..<start + size])
            start += size
        }
        return result
    }
}

extension Rope: ExpressibleByStringLiteral {
    public init(stringLiteral text: String) {
        self.init(text)
    }
}

extension Rope: Equatable {
    /// Equal when they hold the same scalars (not when Swift's `String ==` would call them equal:
    /// a precomposed "é" and "e" with a combining accent are different texts here).
    public static func == (lhs: Rope, rhs: Rope) -> Bool {
        guard lhs.root.summary == rhs.root.summary else { return false }
        if lhs.root === rhs.root { return true }
        // Chunks fall at different places in the two trees: walk both, byte range by byte range.
        var left = lhs.chunks, right = rhs.chunks
        var a = "", b = ""
        var i = 0, j = 0  // bytes of `a` and `b` already compared
        while true {
            if i == a.utf8.count {
                guard let next = left.next() else { return true }  // equal lengths: both end here
                (a, i) = (next, 0)
            }
            if j == b.utf8.count {
                guard let next = right.next() else { return true }
                (b, j) = (next, 0)
            }
            let count = Swift.min(a.utf8.count - i, b.utf8.count - j)
            let same = a.withUTF8Buffer { x in
                b.withUTF8Buffer { y in
                    UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: x[i..<i + count]))
                        .hasSameBytes(as: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: y[j..<j + count])))
                }
            }
            guard same else { return false }
            i += count
            j += count
        }
    }
}

extension Rope: CustomStringConvertible {
    /// The whole text; O(n).
    public var description: String { String(self) }
}
