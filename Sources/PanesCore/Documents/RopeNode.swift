/// A node of a `Rope`: a leaf holding one chunk of text, or an inner node holding children of
/// one height. Nodes never change after they are made, so any number of ropes, on any thread,
/// share them; an edit makes new nodes along one path and reuses every other node.
///
/// The tree is a B-tree, and every rope keeps it balanced:
/// - all leaves are at height 0 and every child of a node is one lower than it;
/// - a leaf holds at most `maxLeafBytes` of UTF-8, and at least `minLeafBytes` unless it is
///   the root (the root leaf of the empty rope is empty);
/// - an inner node has at most `maxChildren` children, and at least `minChildren` unless it is
///   the root, which has at least 2.
/// So the height is at most about log₄ of the leaf count, and the nodes cost a few percent
/// over the text itself.
final class RopeNode: Sendable {
    /// 0 for a leaf.
    let height: Int
    let summary: RopeSummary
    /// A leaf's text; empty for an inner node.
    let text: String
    /// An inner node's children, in order; empty for a leaf.
    let children: [RopeNode]

    static let maxLeafBytes = 2_048
    /// A quarter of the largest, so that two neighbours of which one is too small always fit
    /// in two leaves that are both large enough (an even split of up to `2 × max` bytes).
    static let minLeafBytes = 512
    static let maxChildren = 16
    static let minChildren = 4

    /// The root of the empty rope.
    static let empty = RopeNode(leaf: "", summary: RopeSummary())

    init(leaf text: String, summary: RopeSummary) {
        height = 0
        self.summary = summary
        self.text = text
        children = []
    }

    /// A leaf; counts the text once.
    convenience init(leaf text: String) {
        self.init(leaf: text, summary: RopeSummary(text))
    }

    init(children: [RopeNode], summary: RopeSummary) {
        height = children[0].height + 1
        self.summary = summary
        text = ""
        self.children = children
    }

    /// An inner node over `children`, all of one height; adds up their counts.
    convenience init(children: [RopeNode]) {
        var summary = RopeSummary()
        for child in children { summary += child.summary }
        self.init(children: children, summary: summary)
    }

    var isLeaf: Bool { height == 0 }
    var isEmpty: Bool { summary.utf8 == 0 }

    /// Big enough to be a child (rather than only a root).
    var isBigEnough: Bool {
        isLeaf ? summary.utf8 >= Self.minLeafBytes : children.count >= Self.minChildren
    }
}

/// What a piece of text measures in each unit the protocol or a client may count in.
struct RopeSummary: Sendable, Equatable {
    var utf8 = 0
    /// Unicode scalar values: the unit of document positions.
    var scalars = 0
    /// UTF-16 code units, for clients that count as JavaScript strings do.
    var utf16 = 0

    init() {}

    init(utf8: Int, scalars: Int, utf16: Int) {
        self.utf8 = utf8
        self.scalars = scalars
        self.utf16 = utf16
    }

    /// Counts `text` in one pass over its bytes.
    init(_ text: String) {
        self = text.withUTF8Buffer { RopeSummary($0) }
    }

    /// Counts UTF-8 bytes: a scalar starts at every byte that is not a continuation byte
    /// (`10xxxxxx`), and a scalar needs two UTF-16 units exactly when it takes four bytes
    /// (`11110xxx`). Eight bytes at a time, as bit masks: the same in any build mode.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        var continuations = 0
        var fourByteLeads = 0
        var index = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                continuations &+= Self.continuationMask(word).nonzeroBitCount
                fourByteLeads &+= (word & word << 1 & word << 2 & word << 3 & Self.highBits).nonzeroBitCount
                index += 8
            }
        }
        while index < bytes.count {
            continuations &+= bytes[index] & 0xC0 == 0x80 ? 1 : 0
            fourByteLeads &+= bytes[index] >= 0xF0 ? 1 : 0
            index += 1
        }
        let scalars = bytes.count - continuations
        self.init(utf8: bytes.count, scalars: scalars, utf16: scalars + fourByteLeads)
    }

    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` that is a continuation byte: bit 7 set, bit 6 clear.
    /// (Shifting left by one moves each byte's bit 6 to its bit 7 and nothing else there.)
    static func continuationMask(_ word: UInt64) -> UInt64 {
        word & ~(word << 1) & highBits
    }

    static func += (lhs: inout RopeSummary, rhs: RopeSummary) {
        lhs.utf8 += rhs.utf8
        lhs.scalars += rhs.scalars
        lhs.utf16 += rhs.utf16
    }

    static func + (lhs: RopeSummary, rhs: RopeSummary) -> RopeSummary {
        var sum = lhs
        sum += rhs
        return sum
    }

    static func - (lhs: RopeSummary, rhs: RopeSummary) -> RopeSummary {
        RopeSummary(utf8: lhs.utf8 - rhs.utf8, scalars: lhs.scalars - rhs.scalars, utf16: lhs.utf16 - rhs.utf16)
    }
}
