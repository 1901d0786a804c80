/// The difference between two texts as an operation: what `restoreVersion` applies (today's
/// text to the version's) and what `compareVersions` answers (one version's text to the
/// other's). The same algorithm as the JS client's `web/lib/text-diff.js`, which rebases unsent
/// edits over a difference: Myers' O(ND) diff in its linear-space form (the middle snake found
/// from both ends, as diff-match-patch's `diff_bisect`), first over lines (each distinct line
/// one token; words when lines are long), then over scalars inside each run of changed lines.
///
/// The result is minimal within a line; across lines, changed lines are diffed only against the
/// lines they replaced, which keeps edits far apart from being matched up with each other.
///
/// Bounded: past `budget` search steps the changed runs still left are each replaced whole. The
/// result is always exact: applying it to `from` gives `to`. Pieces are compared by their
/// scalars, never as `String`s (whose `==` is canonical equivalence, which would call an
/// `é` and an `e` with a combining accent the same line).
///
/// It runs on the store thread (`VersionRead`), never on the hub's.
public enum TextDiff {
    /// Search steps allowed for one diff before the remaining changed runs are replaced whole:
    /// a few hundred milliseconds at worst.
    public static let defaultBudget = 20_000_000
    /// Average line length (scalars) above which the first pass cuts words, not lines.
    static let longLines = 400

    /// The operation that turns `from` into `to`.
    public static func operation(from: String, to: String, budget: Int = defaultBudget) -> TextOperation {
        operation(from: Array(from.unicodeScalars.map(\.value)), to: Array(to.unicodeScalars.map(\.value)),
                  budget: budget)
    }

    static func operation(from a: [UInt32], to b: [UInt32], budget steps: Int) -> TextOperation {
        var budget = steps
        var out = TextOperation()
        var prefix = 0
        let shortest = min(a.count, b.count)
        while prefix < shortest, a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < shortest - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        out.retain(prefix)
        diffMiddle(&out, a[prefix..<(a.count - suffix)], b[prefix..<(b.count - suffix)], &budget)
        out.retain(suffix)
        return out
    }

    /// An edit script: runs of (kind, count), kind 0 both (retain), 1 only in `a` (delete), 2
    /// only in `b` (insert).
    typealias Script = [(kind: UInt8, count: Int)]

    static func push(_ script: inout Script, _ kind: UInt8, _ count: Int) {
        guard count > 0 else { return }
        if let last = script.last, last.kind == kind {
            script[script.count - 1].count += count
        } else {
            script.append((kind, count))
        }
    }

    static func string(_ scalars: ArraySlice<UInt32>) -> String {
        var text = String.UnicodeScalarView()
        for value in scalars { if let scalar = Unicode.Scalar(value) { text.append(scalar) } }
        return String(text)
    }

    /// The two passes over what differs between the texts' common ends.
    static func diffMiddle(_ out: inout TextOperation, _ from: ArraySlice<UInt32>, _ to: ArraySlice<UInt32>,
                           _ budget: inout Int) {
        if from.isEmpty || to.isEmpty {
            out.insert(string(to))
            out.delete(from.count)
            return
        }
        let newline = UInt32(10)
        let lines = from.count { $0 == newline } + to.count { $0 == newline } + 2
        let words = (from.count + to.count) / lines > longLines
        let piecesA = pieces(from, words: words)
        let piecesB = pieces(to, words: words)
        var ids: [ArraySlice<UInt32>: Int32] = [:]
        func tokens(_ list: [ArraySlice<UInt32>]) -> [Int32] {
            list.map { piece in
                if let id = ids[piece] { return id }
                let id = Int32(ids.count)
                ids[piece] = id
                return id
            }
        }
        let a = tokens(piecesA)
        let b = tokens(piecesB)
        var script: Script = []
        diffRange(a, 0, a.count, b, 0, b.count, &script, &budget)
        var ia = 0
        var ib = 0
        var s = 0
        while s < script.count {
            let (kind, count) = script[s]
            if kind == 0 {
                for _ in 0..<count { out.retain(piecesA[ia].count); ia += 1 }
                ib += count
                s += 1
                continue
            }
            // A run of changed pieces: the deletes and inserts until the next common piece.
            var deleted: [UInt32] = []
            var inserted: [UInt32] = []
            while s < script.count, script[s].kind != 0 {
                let (k, c) = script[s]
                if k == 1 {
                    for piece in piecesA[ia..<(ia + c)] { deleted.append(contentsOf: piece) }
                    ia += c
                } else {
                    for piece in piecesB[ib..<(ib + c)] { inserted.append(contentsOf: piece) }
                    ib += c
                }
                s += 1
            }
            diffScalars(&out, deleted, inserted, &budget)
        }
    }

    /// Adds the scalar-level difference of two runs to an operation.
    static func diffScalars(_ out: inout TextOperation, _ a: [UInt32], _ b: [UInt32], _ budget: inout Int) {
        let left = a.map { Int32(bitPattern: $0) }
        let right = b.map { Int32(bitPattern: $0) }
        var script: Script = []
        diffRange(left, 0, left.count, right, 0, right.count, &script, &budget)
        var ib = 0
        for (kind, count) in script {
            switch kind {
            case 0: out.retain(count); ib += count
            case 1: out.delete(count)
            default: out.insert(string(b[ib..<(ib + count)])); ib += count
            }
        }
    }

    /// Lines (each with its newline) or words (each with the spaces after it).
    static func pieces(_ text: ArraySlice<UInt32>, words: Bool) -> [ArraySlice<UInt32>] {
        var out: [ArraySlice<UInt32>] = []
        var start = text.startIndex
        var index = text.startIndex
        if words {
            var inSpace = false
            while index < text.endIndex {
                let space = isSpace(text[index])
                if inSpace, !space {
                    out.append(text[start..<index])
                    start = index
                }
                inSpace = space
                index += 1
            }
        } else {
            while index < text.endIndex {
                if text[index] == 10 {
                    out.append(text[start...index])
                    start = index + 1
                }
                index += 1
            }
        }
        if start < text.endIndex { out.append(text[start..<text.endIndex]) }
        return out
    }

    static func isSpace(_ value: UInt32) -> Bool {
        value == 32 || (9...13).contains(value) || value == 0xA0 || value == 0x2028 || value == 0x2029
    }

    /// Myers' diff of `a[aLo..<aHi]` and `b[bLo..<bHi]`, appended to `script`.
    static func diffRange(_ a: [Int32], _ aLo: Int, _ aHi: Int, _ b: [Int32], _ bLo: Int, _ bHi: Int,
                          _ script: inout Script, _ budget: inout Int) {
        var aLo = aLo, bLo = bLo, aHi = aHi, bHi = bHi
        var prefix = 0
        while aLo + prefix < aHi, bLo + prefix < bHi, a[aLo + prefix] == b[bLo + prefix] { prefix += 1 }
        aLo += prefix
        bLo += prefix
        var suffix = 0
        while aHi - suffix > aLo, bHi - suffix > bLo, a[aHi - 1 - suffix] == b[bHi - 1 - suffix] { suffix += 1 }
        aHi -= suffix
        bHi -= suffix
        push(&script, 0, prefix)
        if aLo == aHi {
            push(&script, 2, bHi - bLo)
        } else if bLo == bHi {
            push(&script, 1, aHi - aLo)
        } else if budget > 0, let split = middleSnake(a, aLo, aHi, b, bLo, bHi, &budget) {
            diffRange(a, aLo, split.x, b, bLo, split.y, &script, &budget)
            diffRange(a, split.x, aHi, b, split.y, bHi, &script, &budget)
        } else {
            // Nothing in common, or out of budget: replace the run.
            push(&script, 1, aHi - aLo)
            push(&script, 2, bHi - bLo)
        }
        push(&script, 0, suffix)
    }

    /// Where the shortest edit path of the two ranges crosses its middle, or nil when they
    /// share nothing or the budget ran out. diff-match-patch's `diff_bisect`, on index ranges.
    static func middleSnake(_ a: [Int32], _ aLo: Int, _ aHi: Int, _ b: [Int32], _ bLo: Int, _ bHi: Int,
                            _ budget: inout Int) -> (x: Int, y: Int)? {
        let n = aHi - aLo
        let m = bHi - bLo
        let maxD = (n + m + 1) / 2
        let offset = maxD
        let size = 2 * maxD + 2
        var forward = [Int](repeating: -1, count: size)
        var backward = [Int](repeating: -1, count: size)
        forward[offset + 1] = 0
        backward[offset + 1] = 0
        let delta = n - m
        // With an odd delta the paths meet while extending forward, else while extending backward.
        let front = delta & 1 != 0
        var k1start = 0, k1end = 0, k2start = 0, k2end = 0
        for d in 0..<maxD {
            budget -= 2 * d + 1
            if budget <= 0 { return nil }
            var k1 = -d + k1start
            while k1 <= d - k1end {
                let i = offset + k1
                var x1 = k1 == -d || (k1 != d && forward[i - 1] < forward[i + 1]) ? forward[i + 1] : forward[i - 1] + 1
                var y1 = x1 - k1
                while x1 < n, y1 < m, a[aLo + x1] == b[bLo + y1] {
                    x1 += 1
                    y1 += 1
                }
                forward[i] = x1
                if x1 > n {
                    k1end += 2
                } else if y1 > m {
                    k1start += 2
                } else if front {
                    let j = offset + delta - k1
                    if j >= 0, j < size, backward[j] != -1, x1 >= n - backward[j] { return (aLo + x1, bLo + y1) }
                }
                k1 += 2
            }
            var k2 = -d + k2start
            while k2 <= d - k2end {
                let i = offset + k2
                var x2 = k2 == -d || (k2 != d && backward[i - 1] < backward[i + 1]) ? backward[i + 1] : backward[i - 1] + 1
                var y2 = x2 - k2
                while x2 < n, y2 < m, a[aHi - 1 - x2] == b[bHi - 1 - y2] {
                    x2 += 1
                    y2 += 1
                }
                backward[i] = x2
                if x2 > n {
                    k2end += 2
                } else if y2 > m {
                    k2start += 2
                } else if !front {
                    let j = offset + delta - k2
                    if j >= 0, j < size, forward[j] != -1 {
                        let x1 = forward[j]
                        let y1 = x1 - (j - offset)
                        if x1 >= n - x2 { return (aLo + x1, bLo + y1) }
                    }
                }
                k2 += 2
            }
        }
        return nil
    }
}
