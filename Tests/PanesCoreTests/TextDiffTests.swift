@testable import PanesCore
import Testing

/// `TextDiff` (what `compareVersions` answers and `restoreVersion` applies): always exact, as
/// small as an edit distance on small texts, apart where edits are apart, and bounded.
@Suite struct TextDiffTests {
    /// Insertions plus deletions of the operation.
    static func cost(_ operation: TextOperation) -> Int {
        operation.components.reduce(0) { total, component in
            switch component {
            case .retain: total
            case .insert(let text): total + text.unicodeScalars.count
            case .delete(let count): total + count
            }
        }
    }

    /// The fewest inserted plus deleted scalars that turn `a` into `b` (no substitution).
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var next = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                next[j] = a[i - 1] == b[j - 1] ? row[j - 1] : min(row[j], next[j - 1]) + 1
            }
            row = next
        }
        return a.isEmpty ? b.count : row[b.count]
    }

    /// - Parameter lines: with newlines (the line pass then runs first, and the result is exact
    ///   but not always minimal).
    static func text(_ random: inout SplitMix64, length: Int, lines: Bool = true) -> String {
        // Canonically equivalent pieces (é and e + ◌́) must stay different: they are different scalars.
        let pieces = ["a", "b", " ", "é", "e\u{301}", "😀"] + (lines ? ["\n"] : [])
        return (0..<length).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
    }

    @Test func theDiffIsExactAlwaysAndMinimalWithinALine() throws {
        var random = SplitMix64(seed: 25)
        for round in 0..<4_000 {
            let lines = round % 2 == 0
            let a = Self.text(&random, length: Int(random.next() % 9), lines: lines)
            let b = Self.text(&random, length: Int(random.next() % 9), lines: lines)
            let operation = TextDiff.operation(from: a, to: b)
            let applied = try operation.apply(to: a)
            #expect(applied.unicodeScalars.elementsEqual(b.unicodeScalars), "\(a.debugDescription) → \(b.debugDescription)")
            guard !lines else { continue }
            #expect(Self.cost(operation) == Self.distance(Array(a.unicodeScalars), Array(b.unicodeScalars)),
                    "\(a.debugDescription) → \(b.debugDescription): \(operation.components)")
        }
    }

    @Test func largeTextsWithScatteredEditsKeepTheirEditsApart() throws {
        var random = SplitMix64(seed: 4)
        let lines = (0..<2_000).map { "line \($0) " + Self.text(&random, length: 20) + "\n" }
        var edited = lines
        for index in stride(from: 100, to: 2_000, by: 400) { edited[index] = "changed \(index)\n" }
        let a = lines.joined(), b = edited.joined()
        let operation = TextDiff.operation(from: a, to: b)
        #expect(try operation.apply(to: a).unicodeScalars.elementsEqual(b.unicodeScalars))
        // Only the five changed lines are touched: the text before the first is retained whole,
        // and no more is inserted or deleted than those lines hold.
        let before = lines[..<100].joined().unicodeScalars.count
        guard case .retain(let kept)? = operation.components.first else { Issue.record("no leading retain"); return }
        #expect(kept >= before)
        let changed = stride(from: 100, to: 2_000, by: 400).reduce(0) {
            $0 + lines[$1].unicodeScalars.count + edited[$1].unicodeScalars.count
        }
        #expect(Self.cost(operation) <= changed)
    }

    @Test func pastItsBudgetTheDiffStaysExact() throws {
        var random = SplitMix64(seed: 9)
        let a = Self.text(&random, length: 3_000), b = Self.text(&random, length: 3_000)
        let operation = TextDiff.operation(from: a, to: b, budget: 1_000)
        #expect(try operation.apply(to: a).unicodeScalars.elementsEqual(b.unicodeScalars))
    }
}
