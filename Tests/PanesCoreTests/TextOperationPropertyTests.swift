import PanesCore
import Testing

/// Randomised checks of the OT laws over many seeds. Everything comes from a seeded PRNG, so a
/// failure names its seed and replays exactly.
struct TextOperationPropertyTests {
    static let seeds: Range<UInt64> = 0..<500

    /// Runs `body` once per seed with a generator seeded by it; an error thrown for one seed is
    /// recorded with that seed, and the other seeds still run.
    private func forEachSeed(_ body: (UInt64, inout SplitMix64) throws -> Void) {
        for seed in Self.seeds {
            var random = SplitMix64(seed: seed)
            do {
                try body(seed, &random)
            } catch {
                Issue.record("seed \(seed): threw \(error)")
            }
        }
    }

    @Test func transformedOperationsConverge() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: 24)
            let a = random.operation(on: doc), b = random.operation(on: doc)
            let (aPrime, bPrime) = try TextOperation.transform(a, b)
            let viaA = try bPrime.apply(to: a.apply(to: doc))
            let viaB = try aPrime.apply(to: b.apply(to: doc))
            #expect(viaA.scalars == viaB.scalars, "seed \(seed): doc \(doc.debugDescription), a \(a), b \(b)")
        }
    }

    /// The convention in `TextOperation.transform`'s comment: the server rewrites a client's
    /// operation with `transform(client, history)` and the client rewrites history with
    /// `transform(outstanding, history)`, and both end at the same text.
    @Test func aClientAndTheServerConvergeWithTheDocumentedArgumentOrder() {
        forEachSeed { seed, random in
            var texts = [random.text(maxPieces: 12)]  // texts[r]: the document at revision r
            var history: [TextOperation] = []
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let op = random.operation(on: texts[texts.count - 1])
                history.append(op)
                texts.append(try op.apply(to: texts[texts.count - 1]))
            }
            // A client at an older revision edits, not yet knowing the later history.
            let revision = Int.random(in: 0...history.count, using: &random)
            let clientOp = random.operation(on: texts[revision])

            var onServer = clientOp
            for entry in history[revision...] { onServer = try TextOperation.transform(onServer, entry).0 }
            let serverText = try onServer.apply(to: texts[texts.count - 1])

            var clientText = try clientOp.apply(to: texts[revision])
            var outstanding = clientOp
            for entry in history[revision...] {
                let (rewritten, entryForClient) = try TextOperation.transform(outstanding, entry)
                outstanding = rewritten
                clientText = try entryForClient.apply(to: clientText)
            }
            #expect(clientText.scalars == serverText.scalars, "seed \(seed): client \(clientOp) at revision \(revision)")
            #expect(outstanding == onServer, "seed \(seed): client \(clientOp) at revision \(revision)")
        }
    }

    @Test func transformingPastAnOperationIsTheFirstHalfOfTransform() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: 24)
            let a = random.operation(on: doc), b = random.operation(on: doc)
            let alone = try a.transformed(past: b)
            let pair = try TextOperation.transform(a, b)
            #expect(alone == pair.0, "seed \(seed): a \(a), b \(b)")
        }
    }

    /// Typing (one insert, nothing deleted) takes a shortcut in `transformed(past:)`: it must
    /// give what the general algorithm gives, ties and deletions around the insert included.
    @Test func typingPastAnOperationTakesTheShortcutToTheSameResult() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: 12)
            let length = doc.unicodeScalars.count
            for _ in 0..<8 {
                let position = Int.random(in: 0...length, using: &random)
                var typed = TextOperation()
                typed.retain(position)
                typed.insert(random.text(maxPieces: 2).isEmpty ? "x" : random.text(maxPieces: 2) + "y")
                typed.retain(length - position)
                // b: random, or inserting and deleting right at the insert's position.
                var b = random.operation(on: doc)
                if Bool.random(using: &random) {
                    b = TextOperation()
                    b.retain(position)
                    if Bool.random(using: &random) { b.insert("z") }
                    let deleted = Int.random(in: 0...(length - position), using: &random)
                    b.delete(deleted)
                    b.retain(length - position - deleted)
                }
                let alone = try typed.transformed(past: b)
                #expect(alone == (try TextOperation.transform(typed, b)).0, "seed \(seed): typed \(typed), b \(b)")
                #expect(try alone.apply(to: b.apply(to: doc)).unicodeScalars.count == alone.targetLength)
            }
        }
    }

    @Test func transformKeepsLengthsConsistent() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: 24)
            let a = random.operation(on: doc), b = random.operation(on: doc)
            let (aPrime, bPrime) = try TextOperation.transform(a, b)
            #expect(aPrime.baseLength == b.targetLength, "seed \(seed): a \(a), b \(b)")
            #expect(bPrime.baseLength == a.targetLength, "seed \(seed): a \(a), b \(b)")
            #expect(aPrime.targetLength == bPrime.targetLength, "seed \(seed): a \(a), b \(b)")
        }
    }

    @Test func composingEqualsApplyingInTurn() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: 24)
            let a = random.operation(on: doc)
            let middle = try a.apply(to: doc)
            let b = random.operation(on: middle)
            let composed = try a.compose(b)
            #expect(try composed.apply(to: doc).scalars == b.apply(to: middle).scalars, "seed \(seed): a \(a), b \(b)")
            #expect(composed.baseLength == a.baseLength && composed.targetLength == b.targetLength,
                    "seed \(seed): a \(a), b \(b)")
        }
    }

    /// The rope (what the server holds) and the string (what clients and the JS vectors use)
    /// give the same text for every operation, many components and all.
    @Test func applyingToARopeEqualsApplyingToAString() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: Int.random(in: 0...400, using: &random))
            let op = random.operation(on: doc)
            let rope = Rope(doc)
            let result = try op.apply(to: rope)
            #expect(String(result).scalars == (try op.apply(to: doc)).scalars, "seed \(seed): \(op)")
            #expect(rope == Rope(doc), "seed \(seed): applying changed the original rope")
        }
    }

    /// What the snapshot's byte count adds up, without encoding: the same as the wire form's size.
    @Test func encodedSizeIsTheSizeOfTheWireForm() {
        forEachSeed { seed, random in
            let op = random.operation(on: random.text(maxPieces: 24))
            #expect(op.encodedSize == op.json.encodedSize, "seed \(seed): \(op)")
        }
        let big = TextOperation([.retain(1_234_567), .insert("a\"b\n\u{1}"), .delete(10), .retain(9)])
        #expect(big.encodedSize == #"[1234567,"a\"b\n\u0001",-10,9]"#.utf8.count)
        #expect(TextOperation().encodedSize == 2)
    }

    @Test func composeIsAssociative() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: 16)
            let a = random.operation(on: doc)
            let b = random.operation(on: try a.apply(to: doc))
            let c = random.operation(on: try b.apply(to: a.apply(to: doc)))
            #expect(try a.compose(b).compose(c) == a.compose(b.compose(c)), "seed \(seed): a \(a), b \(b), c \(c)")
        }
    }

    @Test func resultsAreCanonicalAndSurviveTheWire() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: 16)
            let a = random.operation(on: doc), b = random.operation(on: doc)
            let (aPrime, bPrime) = try TextOperation.transform(a, b)
            for op in [a, b, aPrime, bPrime, try a.compose(bPrime)] {
                #expect(isCanonical(op), "seed \(seed): \(op) is not canonical")
                #expect(try TextOperation(json: op.json) == op, "seed \(seed): \(op) changed on the wire")
                #expect(try TextOperation(json: random.split(op)) == op, "seed \(seed): \(op) split differently")
            }
        }
    }

    @Test func positionsStayInTheDocumentAndInOrder() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: 24)
            let op = random.operation(on: doc)
            for isOwnEdit in [false, true] {
                var previous = 0
                for position in 0...op.baseLength {
                    let moved = op.transform(position: position, isOwnEdit: isOwnEdit)
                    #expect((0...op.targetLength).contains(moved), "seed \(seed): \(op) moves \(position) to \(moved)")
                    #expect(moved >= previous, "seed \(seed): \(op) moves \(position) to \(moved), before \(previous)")
                    previous = moved
                }
            }
        }
    }

    @Test func ownCursorsStayOnTheScalarTheyWereBefore() {
        forEachSeed { seed, random in
            let doc = random.text(maxPieces: 24)
            let op = random.operation(on: doc)
            let before = Array(doc.unicodeScalars), after = Array(try op.apply(to: doc).unicodeScalars)
            for position in retainedPositions(op) {
                let moved = op.transform(position: position, isOwnEdit: true)
                #expect(after[moved] == before[position], "seed \(seed): \(op) moves retained \(position) to \(moved)")
                #expect(op.transform(position: position) <= moved, "seed \(seed): \(op) at \(position)")
            }
        }
    }

    private func isCanonical(_ op: TextOperation) -> Bool {
        zip(op.components, op.components.dropFirst()).allSatisfy { pair in
            switch pair {
            case (.retain, .retain), (.insert, .insert), (.delete, .delete), (.delete, .insert): false
            default: true
            }
        } && op.components.allSatisfy { $0.length > 0 }
    }

    /// Base positions whose scalar the operation keeps.
    private func retainedPositions(_ op: TextOperation) -> [Int] {
        var positions: [Int] = [], old = 0
        for component in op.components {
            switch component {
            case .retain(let count):
                positions += old..<(old + count)
                old += count
            case .delete(let count): old += count
            case .insert: break
            }
        }
        return positions
    }
}

extension String {
    /// The scalars, for exact comparison: `String ==` calls canonically equivalent text equal
    /// (a precomposed "é" and "e" plus an accent), which would hide scalar-level mistakes.
    var scalars: [Unicode.Scalar] { Array(unicodeScalars) }
}

/// SplitMix64 (Steele, Lea and Flood): tiny, fast and good enough to drive property tests.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// Pieces of text from several scripts and planes: ASCII, a precomposed é, e plus a
    /// combining accent, a lone combining mark, CJK, astral emoji and letters, a ZWJ sequence
    /// and a flag.
    static let pieces = ["a", "b", "c", " ", "\n", "é", "e\u{301}", "\u{308}", "漢", "字", "😀", "𝒳",
                         "👩\u{200D}💻", "🇫🇷"]

    mutating func text(maxPieces: Int) -> String {
        (0..<Int.random(in: 0...maxPieces, using: &self)).map { _ in Self.pieces.randomElement(using: &self)! }.joined()
    }

    /// A random operation spanning `doc`.
    mutating func operation(on doc: String) -> TextOperation {
        var op = TextOperation()
        var remaining = doc.unicodeScalars.count
        while remaining > 0 {
            let count = Int.random(in: 1...min(remaining, 6), using: &self)
            switch Int.random(in: 0..<5, using: &self) {
            case 0, 1:
                op.retain(count)
                remaining -= count
            case 2, 3:
                op.delete(count)
                remaining -= count
            default:
                op.insert(text(maxPieces: 4))
            }
        }
        if Bool.random(using: &self) { op.insert(text(maxPieces: 3)) }
        return op
    }

    /// The operation's wire form with components cut into random smaller ones, so decoding
    /// has to merge them again.
    mutating func split(_ op: TextOperation) -> JSONValue {
        var parts: [JSONValue] = []
        for component in op.components {
            switch component {
            case .retain(let count), .delete(let count):
                let sign: Int64 = if case .retain = component { 1 } else { -1 }
                var left = count
                while left > 0 {
                    let take = Int.random(in: 1...left, using: &self)
                    parts.append(.int(sign * Int64(take)))
                    left -= take
                }
            case .insert(let text):
                var scalars = Substring(text).unicodeScalars[...]
                while !scalars.isEmpty {
                    let take = Int.random(in: 1...scalars.count, using: &self)
                    parts.append(.string(String(String.UnicodeScalarView(scalars.prefix(take)))))
                    scalars = scalars.dropFirst(take)
                }
            }
        }
        return .array(parts)
    }
}
