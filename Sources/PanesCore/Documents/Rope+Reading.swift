/// Reading a rope: its chunks and scalars in order, a prefix, or the whole text as a `String`.
extension Rope {
    /// The text's chunks, in order, each a string of whole scalars. Walking them all is O(n);
    /// a chunk may begin with a combining mark or end inside a grapheme cluster.
    public var chunks: Chunks { Chunks(root) }

    /// The text's Unicode scalars, in order.
    public var unicodeScalars: UnicodeScalars { UnicodeScalars(root: root) }

    /// The first `maxScalars` scalars (all of them when there are fewer): O(log n + maxScalars).
    public func prefix(_ maxScalars: Int) -> String {
        var result = ""
        var wanted = maxScalars
        for chunk in chunks {
            guard wanted > 0 else { break }
            let scalars = chunk.unicodeScalars
            let end = scalars.index(scalars.startIndex, offsetBy: wanted, limitedBy: scalars.endIndex) ?? scalars.endIndex
            result.unicodeScalars.append(contentsOf: scalars[..<end])
            wanted -= scalars.distance(from: scalars.startIndex, to: end)
        }
        return result
    }

    /// Leaves in order, walked with a stack of the nodes above the next one.
    public struct Chunks: Sequence, IteratorProtocol, Sendable {
        private var stack: [(node: RopeNode, next: Int)]

        init(_ root: RopeNode) {
            stack = [(root, 0)]
        }

        public mutating func next() -> String? {
            while let (node, next) = stack.last {
                if node.isLeaf {
                    stack.removeLast()
                    if node.isEmpty { continue }
                    return node.text
                }
                if next == node.children.count {
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                stack.append((node.children[next], 0))
            }
            return nil
        }
    }

    public struct UnicodeScalars: Sequence, Sendable {
        let root: RopeNode

        public func makeIterator() -> Iterator {
            Iterator(chunks: Chunks(root), current: "".unicodeScalars.makeIterator())
        }

        public struct Iterator: IteratorProtocol {
            var chunks: Chunks
            var current: String.UnicodeScalarView.Iterator

            public mutating func next() -> Unicode.Scalar? {
                while true {
                    if let scalar = current.next() { return scalar }
                    guard let chunk = chunks.next() else { return nil }
                    current = chunk.unicodeScalars.makeIterator()
                }
            }
        }
    }
}

extension String {
    /// The rope's whole text, in one allocation of its exact size: O(n).
    public init(_ rope: Rope) {
        self.init()
        reserveCapacity(rope.utf8Count)
        for chunk in rope.chunks { append(chunk) }
    }
}
