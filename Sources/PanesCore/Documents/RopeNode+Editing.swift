/// Tree surgery: split a tree at a position, join two trees, and the fast path that edits one
/// leaf in place of its path. Each takes trees that keep `RopeNode`'s balance rules (as roots)
/// and returns one that does, making new nodes only along the paths it walks: O(log n).
extension RopeNode {
    /// The tree with scalars `range` replaced by `text`, when the change falls inside one
    /// leaf and that leaf stays within its size bounds; nil otherwise. Copies the leaf and the
    /// nodes above it, nothing else.
    static func replacingWithinLeaf(_ node: RopeNode, _ range: Range<Int>, with text: String,
                                    counted inserted: RopeSummary, isRoot: Bool) -> RopeNode? {
        if node.isLeaf {
            return node.text.withUTF8Buffer { bytes -> RopeNode? in
                let lower = bytes.byteOffset(ofScalar: range.lowerBound, summary: node.summary)
                let upper = range.isEmpty ? lower : bytes.byteOffset(ofScalar: range.upperBound, summary: node.summary)
                let size = bytes.count - (upper - lower) + inserted.utf8
                guard size <= maxLeafBytes, isRoot || size >= minLeafBytes else { return nil }
                let removed = RopeSummary(UnsafeBufferPointer(rebasing: bytes[lower..<upper]))
                let edited = String.joining(node.text, 0..<lower, text, 0..<inserted.utf8,
                                            node.text, upper..<bytes.count)
                return RopeNode(leaf: edited, summary: node.summary - removed + inserted)
            }
        }
        var start = 0
        for (index, child) in node.children.enumerated() {
            let end = start + child.summary.scalars
            if range.upperBound <= end {
                guard range.lowerBound >= start,
                      let replaced = replacingWithinLeaf(child, (range.lowerBound - start)..<(range.upperBound - start),
                                                         with: text, counted: inserted, isRoot: false)
                else { return nil }
                var children = node.children
                children[index] = replaced
                return RopeNode(children: children, summary: node.summary - child.summary + replaced.summary)
            }
            start = end
        }
        return nil
    }

    /// The scalars before `offset` and those from it on, as two trees.
    static func split(_ node: RopeNode, at offset: Int) -> (RopeNode, RopeNode) {
        if offset <= 0 { return (.empty, node) }
        if offset >= node.summary.scalars { return (node, .empty) }
        if node.isLeaf {
            return node.text.withUTF8Buffer { bytes in
                let cut = bytes.byteOffset(ofScalar: offset, summary: node.summary)
                let before = RopeSummary(UnsafeBufferPointer(rebasing: bytes[..<cut]))
                return (RopeNode(leaf: node.text.utf8Slice(0..<cut), summary: before),
                        RopeNode(leaf: node.text.utf8Slice(cut..<bytes.count), summary: node.summary - before))
            }
        }
        let children = node.children
        var start = 0
        for (index, child) in children.enumerated() {
            let end = start + child.summary.scalars
            if offset < end {
                if offset == start { return (tree(of: children[..<index]), tree(of: children[index...])) }
                // The siblings on each side form a tree of their own; the child's halves join them.
                let (left, right) = split(child, at: offset - start)
                return (join(tree(of: children[..<index]), left), join(right, tree(of: children[(index + 1)...])))
            }
            start = end
        }
        preconditionFailure("offset \(offset) not found in a node of \(node.summary.scalars) scalars")
    }

    /// The text of `left` followed by that of `right`, in O(difference of their heights + 1).
    static func join(_ left: RopeNode, _ right: RopeNode) -> RopeNode {
        if left.isEmpty { return right }
        if right.isEmpty { return left }
        let nodes = if left.height == right.height {
            merged(left, right)
        } else if left.height > right.height {
            joined(left, appending: right)
        } else {
            joined(left, prepending: right)
        }
        return nodes.count == 1 ? nodes[0] : RopeNode(children: nodes)
    }

    /// `node` with the shorter tree `tail` appended down its right edge: one node of `node`'s
    /// height, or two big enough ones when it overflowed.
    private static func joined(_ node: RopeNode, appending tail: RopeNode) -> [RopeNode] {
        var children = node.children
        let last = children.removeLast()
        if node.height == tail.height + 1 {
            // A tree's root may be smaller than a child may be: merge it into its neighbour then.
            children += tail.isBigEnough ? [last, tail] : merged(last, tail)
        } else {
            children += joined(last, appending: tail)
        }
        return packed(children)
    }

    /// `node` with the shorter tree `head` prepended down its left edge (see `joined(_:appending:)`).
    private static func joined(_ head: RopeNode, prepending node: RopeNode) -> [RopeNode] {
        var children = node.children
        let first = children.removeFirst()
        if node.height == head.height + 1 {
            children.insert(contentsOf: head.isBigEnough ? [head, first] : merged(head, first), at: 0)
        } else {
            children.insert(contentsOf: joined(head, prepending: first), at: 0)
        }
        return packed(children)
    }

    /// Two neighbours of one height as one node if they fit in one, else as two that are both
    /// big enough (either as they are, or their contents shared out evenly).
    private static func merged(_ left: RopeNode, _ right: RopeNode) -> [RopeNode] {
        if left.isLeaf {
            let total = left.summary.utf8 + right.summary.utf8
            if total <= maxLeafBytes {
                let text = String.joining(left.text, 0..<left.summary.utf8, right.text, 0..<right.summary.utf8)
                return [RopeNode(leaf: text, summary: left.summary + right.summary)]
            }
            if left.isBigEnough && right.isBigEnough { return [left, right] }
            return evenLeaves(left, right)
        }
        if left.children.count + right.children.count <= maxChildren || !(left.isBigEnough && right.isBigEnough) {
            return packed(left.children + right.children)
        }
        return [left, right]
    }

    /// The bytes of two leaves, more than one leaf holds, cut near the middle into two leaves.
    private static func evenLeaves(_ left: RopeNode, _ right: RopeNode) -> [RopeNode] {
        let leftBytes = left.summary.utf8
        let total = leftBytes + right.summary.utf8
        // The cut must fall on a scalar boundary; the seam between the leaves is one.
        let cut = if total / 2 < leftBytes {
            left.text.withUTF8Buffer { $0.scalarBoundary(atOrBefore: total / 2) }
        } else {
            leftBytes + right.text.withUTF8Buffer { $0.scalarBoundary(atOrBefore: total / 2 - leftBytes) }
        }
        let first = String.joining(left.text, 0..<min(cut, leftBytes), right.text, 0..<max(cut - leftBytes, 0))
        let second = String.joining(left.text, min(cut, leftBytes)..<leftBytes,
                                    right.text, max(cut - leftBytes, 0)..<right.summary.utf8)
        let firstNode = RopeNode(leaf: first)
        return [firstNode, RopeNode(leaf: second, summary: left.summary + right.summary - firstNode.summary)]
    }

    /// Children as one node, or as two of nearly equal size when they are more than one holds
    /// (at most twice as many, so each of the two is big enough).
    private static func packed(_ children: [RopeNode]) -> [RopeNode] {
        Rope.evenGroups(of: children, atMost: maxChildren).map { RopeNode(children: Array($0)) }
    }

    /// Siblings taken out of a node, as a tree: nothing, the one node, or a new root over them.
    private static func tree(of siblings: ArraySlice<RopeNode>) -> RopeNode {
        switch siblings.count {
        case 0: .empty
        case 1: siblings[siblings.startIndex]
        default: RopeNode(children: Array(siblings))
        }
    }
}
