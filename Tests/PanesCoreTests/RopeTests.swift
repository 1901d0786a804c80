@testable import PanesCore
import Testing

/// The rope against the plainest model there is, an array of scalars: random edits over many
/// seeds, with astral characters, combining marks, CRLF and ZWJ sequences, from empty and from
/// megabyte texts, and edit patterns that would unbalance a naive tree. After every step the
/// tree must keep its balance rules and its counts (`RopeChecker`), and its text must be the
/// model's.
struct RopeTests {
    // MARK: Random edits against a model

    @Test(arguments: 0..<60 as Range<UInt64>)
    func randomEditsMatchAStringModel(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        // Sizes around one leaf, a few leaves, and a few levels of inner nodes.
        let size = [0, 10, 600, 2_100, 9_000, 40_000].randomElement(using: &random)!
        var model = Array(random.ropeText(scalars: size).unicodeScalars)
        var rope = Rope(String(String.UnicodeScalarView(model)))
        RopeChecker.expectValid(rope, equalTo: model, "seed \(seed), start")
        for step in 0..<100 {
            let (range, text) = random.edit(length: model.count)
            rope.replace(range, with: text)
            model.replaceSubrange(range, with: text.unicodeScalars)
            RopeChecker.expectBalanced(rope, "seed \(seed), step \(step): \(range) with \(text.debugDescription)")
            #expect(rope.scalarCount == model.count, "seed \(seed), step \(step)")
            // The text only now and then: reading it all is what the rope exists to avoid.
            if step % 10 == 9 {
                RopeChecker.expectValid(rope, equalTo: model, "seed \(seed), step \(step)")
            }
        }
    }

    /// Megabyte documents: the structure is checked after every edit, the text every 50 edits
    /// (checking a megabyte is what the rope exists to avoid per edit).
    @Test(arguments: 0..<3 as Range<UInt64>)
    func randomEditsOnAMegabyteMatchTheModel(seed: UInt64) {
        var random = SplitMix64(seed: seed &+ 1_000)
        var model = Array(random.megabyteText().unicodeScalars)
        var rope = Rope(String(String.UnicodeScalarView(model)))
        #expect(rope.utf8Count >= 1 << 20)
        RopeChecker.expectValid(rope, equalTo: model, "seed \(seed), start")
        for step in 0..<200 {
            let (range, text) = random.edit(length: model.count, large: step % 25 == 0)
            rope.replace(range, with: text)
            model.replaceSubrange(range, with: text.unicodeScalars)
            RopeChecker.expectBalanced(rope, "seed \(seed), step \(step)")
            #expect(rope.scalarCount == model.count, "seed \(seed), step \(step)")
            if step % 100 == 99 { RopeChecker.expectValid(rope, equalTo: model, "seed \(seed), step \(step)") }
        }
    }

    // MARK: Edit patterns that unbalance naive trees

    @Test func typingAtTheEndStaysBalancedAndShallow() {
        var rope = Rope()
        var model = ""
        for index in 0..<20_000 {
            let piece = ["a", "😀", "\r\n", "e\u{301}"][index % 4]
            rope.replace(rope.scalarCount..<rope.scalarCount, with: piece)
            model += piece
            if index % 1_000 == 0 { RopeChecker.expectBalanced(rope, "after \(index)") }
        }
        RopeChecker.expectValid(rope, equalTo: Array(model.unicodeScalars), "typed")
        #expect(rope.root.height <= RopeChecker.maxHeight(leaves: RopeChecker.leafCount(rope)))
    }

    @Test func typingAtTheStartAndInTheMiddleStaysBalanced() {
        var rope = Rope()
        var model: [Unicode.Scalar] = []
        for index in 0..<12_000 {
            let at = index % 2 == 0 ? 0 : rope.scalarCount / 2
            let piece = index % 3 == 0 ? "👩\u{200D}💻" : "xy"
            rope.replace(at..<at, with: piece)
            model.insert(contentsOf: piece.unicodeScalars, at: at)
            if index % 1_000 == 0 { RopeChecker.expectValid(rope, equalTo: model, "after \(index)") }
        }
        RopeChecker.expectValid(rope, equalTo: model, "typed")
    }

    @Test func deletingFromTheFrontOneScalarAtATimeEmptiesTheRope() {
        var model = Array(String(repeating: "ab😀\u{301}\r\n", count: 6_000).unicodeScalars)
        var rope = Rope(String(String.UnicodeScalarView(model)))
        while !model.isEmpty {
            let count = min(model.count, 7)
            rope.replace(0..<count, with: "")
            model.removeFirst(count)
            if model.count % 700 < 7 { RopeChecker.expectValid(rope, equalTo: model, "\(model.count) left") }
        }
        RopeChecker.expectValid(rope, equalTo: [], "emptied")
        #expect(rope.isEmpty && rope.root.isLeaf)
    }

    @Test func deletingAlternatingHalvesKeepsTheRulesAtEveryHeight() {
        var random = SplitMix64(seed: 7)
        var model = Array(random.ropeText(scalars: 300_000).unicodeScalars)
        var rope = Rope(String(String.UnicodeScalarView(model)))
        while model.count > 1 {
            // Cut out the middle third, then keep alternately the front or the back half.
            let third = max(model.count / 3, 1)
            rope.replace(third..<(2 * third), with: "")
            model.removeSubrange(third..<(2 * third))
            RopeChecker.expectValid(rope, equalTo: model, "\(model.count) left")
        }
    }

    @Test func aMegabytePastedIntoASmallDocumentAndCutOutAgain() {
        var random = SplitMix64(seed: 11)
        let big = random.megabyteText()
        var rope: Rope = "héllo, 🌍\r\n"
        var model = Array(String(rope).unicodeScalars)
        rope.replace(5..<5, with: big)
        model.insert(contentsOf: big.unicodeScalars, at: 5)
        RopeChecker.expectValid(rope, equalTo: model, "pasted")
        rope.replace(5..<(5 + big.unicodeScalars.count), with: "")
        RopeChecker.expectValid(rope, equalTo: Array("héllo, 🌍\r\n".unicodeScalars), "cut")
    }

    // MARK: Values

    @Test func aCopyIsUnaffectedByEditsToTheOriginal() {
        var random = SplitMix64(seed: 3)
        let text = random.ropeText(scalars: 50_000)
        var rope = Rope(text)
        let copy = rope
        for _ in 0..<200 {
            let (range, inserted) = random.edit(length: rope.scalarCount)
            rope.replace(range, with: inserted)
        }
        RopeChecker.expectValid(copy, equalTo: Array(text.unicodeScalars), "the copy")
        #expect(String(copy).unicodeScalars.elementsEqual(text.unicodeScalars))
    }

    @Test func anEditSharesEveryNodeOffItsPath() {
        var random = SplitMix64(seed: 5)
        let rope = Rope(random.ropeText(scalars: 200_000))
        var edited = rope
        edited.replace(1_000..<1_001, with: "Z")
        let before = Set(RopeChecker.nodes(rope).map(ObjectIdentifier.init))
        let fresh = RopeChecker.nodes(edited).filter { !before.contains(ObjectIdentifier($0)) }
        // One new node per level: the leaf and its ancestors.
        #expect(fresh.count == edited.root.height + 1)
    }

    @Test func countsAreInScalarsBytesAndUTF16Units() {
        let text = "a\r\né😀e\u{301}👩\u{200D}💻🇫🇷漢"
        let rope = Rope(text)
        #expect(rope.scalarCount == text.unicodeScalars.count)
        #expect(rope.utf8Count == text.utf8.count)
        #expect(rope.utf16Count == text.utf16.count)
        #expect(Rope().scalarCount == 0 && Rope().isEmpty && String(Rope()) == "")
    }

    @Test func equalityIsByScalarsNotCanonicalEquivalence() {
        #expect(Rope("\u{E9}") != Rope("e\u{301}"))
        #expect(Rope("abc") == "abc")
        var random = SplitMix64(seed: 9)
        let text = random.ropeText(scalars: 20_000)
        var edited = Rope(text)
        // Same text, different chunking.
        edited.replace(0..<1, with: String(text.unicodeScalars.first!))
        edited.replace(9_000..<9_000, with: "x")
        edited.replace(9_000..<9_001, with: "")
        #expect(edited == Rope(text))
        edited.replace(100..<101, with: "\u{1F600}")
        #expect(edited != Rope(text) || text.unicodeScalars.dropFirst(100).first == "\u{1F600}")
    }

    @Test func aPrefixCountsScalarsAndNeverSplitsOne() {
        var random = SplitMix64(seed: 13)
        let text = random.ropeText(scalars: 10_000)
        let rope = Rope(text)
        for count in [0, 1, 2, 119, 120, 121, 2_047, 2_048, 5_000, 10_000, 20_000] {
            let expected = String(String.UnicodeScalarView(text.unicodeScalars.prefix(count)))
            #expect(rope.prefix(count).unicodeScalars.elementsEqual(expected.unicodeScalars), "prefix \(count)")
        }
    }

    @Test func chunksAndScalarsReadTheWholeTextInOrder() {
        var random = SplitMix64(seed: 17)
        let text = random.ropeText(scalars: 30_000)
        let rope = Rope(text)
        #expect(rope.chunks.joined().unicodeScalars.elementsEqual(text.unicodeScalars))
        #expect(rope.unicodeScalars.elementsEqual(text.unicodeScalars))
        #expect(rope.chunks.allSatisfy { $0.utf8.count <= RopeNode.maxLeafBytes && !$0.isEmpty })
    }

    @Test func aMegabyteTextIsBuiltFullAndShallow() {
        let text = String(repeating: "0123456789abcdef", count: 1 << 16)
        let rope = Rope(text)
        RopeChecker.expectValid(rope, equalTo: Array(text.unicodeScalars), "built")
        let leaves = RopeChecker.leafCount(rope)
        #expect(leaves == (text.utf8.count + RopeNode.maxLeafBytes - 65) / (RopeNode.maxLeafBytes - 64))
        #expect(rope.root.height == 3)
    }

    @Test func aTextOfOnlyFourByteScalarsIsCutBetweenScalars() {
        let text = String(repeating: "😀", count: 10_000)
        var rope = Rope(text)
        RopeChecker.expectValid(rope, equalTo: Array(text.unicodeScalars), "built")
        rope.replace(4_321..<4_322, with: "a")
        var model = Array(text.unicodeScalars)
        model[4_321] = "a"
        RopeChecker.expectValid(rope, equalTo: model, "edited")
    }
}

// MARK: - Invariants

/// Walks a rope and reports every broken rule of `RopeNode`'s doc comment.
enum RopeChecker {
    /// The structure and the counts: heights, sizes, fan-out, and each node's counts adding up
    /// from its children. O(nodes), reading no text.
    static func expectBalanced(_ rope: Rope, _ context: @autoclosure () -> String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        var problems: [String] = []
        check(rope.root, isRoot: true, rescan: false, path: "root", problems: &problems)
        #expect(problems.isEmpty, "\(context()): \(problems.prefix(5))", sourceLocation: sourceLocation)
    }

    /// The structure, every leaf's counts recounted from its bytes, and the text.
    static func expectValid(_ rope: Rope, equalTo model: [Unicode.Scalar], _ context: @autoclosure () -> String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        var problems: [String] = []
        check(rope.root, isRoot: true, rescan: true, path: "root", problems: &problems)
        #expect(problems.isEmpty, "\(context()): \(problems.prefix(5))", sourceLocation: sourceLocation)
        #expect(rope.scalarCount == model.count, "\(context()): \(rope.scalarCount) scalars, model \(model.count)",
                sourceLocation: sourceLocation)
        #expect(rope.unicodeScalars.elementsEqual(model), "\(context()): the text differs from the model",
                sourceLocation: sourceLocation)
        let text = String(String.UnicodeScalarView(model))
        #expect(rope.utf8Count == text.utf8.count && rope.utf16Count == text.utf16.count,
                "\(context()): byte or UTF-16 count differs", sourceLocation: sourceLocation)
    }

    private static func check(_ node: RopeNode, isRoot: Bool, rescan: Bool, path: String, problems: inout [String]) {
        if node.isLeaf {
            if !node.children.isEmpty { problems.append("\(path): a leaf with children") }
            if node.summary.utf8 > RopeNode.maxLeafBytes { problems.append("\(path): leaf of \(node.summary.utf8) bytes") }
            if !isRoot && node.summary.utf8 < RopeNode.minLeafBytes {
                problems.append("\(path): non-root leaf of only \(node.summary.utf8) bytes")
            }
            if rescan && RopeSummary(node.text) != node.summary {
                problems.append("\(path): leaf counts \(node.summary), text has \(RopeSummary(node.text))")
            }
            return
        }
        let count = node.children.count
        if count > RopeNode.maxChildren { problems.append("\(path): \(count) children") }
        if isRoot && count < 2 { problems.append("\(path): a root with \(count) child") }
        if !isRoot && count < RopeNode.minChildren { problems.append("\(path): only \(count) children") }
        if !node.text.isEmpty { problems.append("\(path): an inner node with text") }
        var sum = RopeSummary()
        for (index, child) in node.children.enumerated() {
            if child.height != node.height - 1 {
                problems.append("\(path).\(index): height \(child.height) under height \(node.height)")
            }
            sum += child.summary
            check(child, isRoot: false, rescan: rescan, path: "\(path).\(index)", problems: &problems)
        }
        if sum != node.summary { problems.append("\(path): counts \(node.summary), children add up to \(sum)") }
    }

    static func nodes(_ rope: Rope) -> [RopeNode] {
        var all: [RopeNode] = []
        var stack = [rope.root]
        while let node = stack.popLast() {
            all.append(node)
            stack += node.children
        }
        return all
    }

    static func leafCount(_ rope: Rope) -> Int {
        nodes(rope).count { $0.isLeaf }
    }

    /// The height a B-tree with this many leaves can reach at most: every inner node but the
    /// root has at least `minChildren`, and the root at least 2.
    static func maxHeight(leaves: Int) -> Int {
        var height = 0
        var least = 1  // fewest leaves under a non-root node of this height
        while 2 * least * RopeNode.minChildren <= leaves {
            least *= RopeNode.minChildren
            height += 1
        }
        return height + 1
    }
}

// MARK: - Random text and edits

extension SplitMix64 {
    /// Pieces that trip up code counting the wrong unit, weighted towards ASCII as real text is.
    static let ropePieces = ["a", "b", " ", "the ", "\n", "\r\n", "é", "e\u{301}", "\u{301}", "漢字", "😀", "👍🏽",
                             "👩\u{200D}💻", "🇯🇵", "\u{1D11E}", "\u{0}"]

    /// About `scalars` scalars of mixed text.
    mutating func ropeText(scalars: Int) -> String {
        var text = ""
        var count = 0
        while count < scalars {
            let piece = Self.ropePieces.randomElement(using: &self)!
            text += piece
            count += piece.unicodeScalars.count
        }
        return text
    }

    /// A megabyte or so of mixed text: a random block, repeated (generating it all piece by
    /// piece would cost the suite seconds in a debug build).
    mutating func megabyteText() -> String {
        String(repeating: ropeText(scalars: 40_000), count: 16)
    }

    /// A random replacement in a text of `length` scalars: mostly small (typing, deleting a
    /// little, replacing a word), sometimes a long cut or paste.
    mutating func edit(length: Int, large: Bool = false) -> (Range<Int>, String) {
        let lower = Int.random(in: 0...length, using: &self)
        let longest = large || Int.random(in: 0..<10, using: &self) == 0 ? length - lower : min(length - lower, 6)
        let upper = lower + Int.random(in: 0...longest, using: &self)
        let insertScalars = large || Int.random(in: 0..<10, using: &self) == 0
            ? Int.random(in: 0...3_000, using: &self) : Int.random(in: 0...4, using: &self)
        return (lower..<upper, ropeText(scalars: insertScalars))
    }
}
