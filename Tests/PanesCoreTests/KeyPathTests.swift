import PanesCore
import Testing

/// A key path is read by bytes in one pass; it must take exactly the paths that splitting at
/// every `.` character and checking each segment takes (what it did before, and what
/// PROTOCOL.md describes).
@Suite struct KeyPathTests {
    /// The rule, spelled as PROTOCOL.md states it.
    static func byTheRule(_ string: String) -> Bool {
        let segments = string.split(separator: ".", omittingEmptySubsequences: false)
        return !string.isEmpty && string.utf8.count <= KeyPath.maxBytes && segments.count <= KeyPath.maxSegments
            && segments.allSatisfy { segment in
                !segment.isEmpty && segment.utf8.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                        || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                }
            }
    }

    @Test(arguments: [
        "a", "editor.showWordCount", "a-b_c.D9", "", ".", "a.", ".a", "a..b", "a b", "a.b.", "é", "a.é", "a.\u{301}b",
        ".\u{301}", "a\u{0}", "a/b", "a:b", String(repeating: "k", count: 256), String(repeating: "k", count: 257),
        Array(repeating: "k", count: 16).joined(separator: "."), Array(repeating: "k", count: 17).joined(separator: "."),
        Array(repeating: "kk", count: 16).joined(separator: ".") + "k",
    ])
    func aPathIsTakenExactlyWhenTheRuleTakesIt(_ string: String) {
        #expect(((try? KeyPath(string)) != nil) == Self.byTheRule(string), "\(string.debugDescription)")
    }

    /// Every short path over a small alphabet of allowed, separating and refused bytes.
    @Test func everyShortPathIsJudgedAsTheRuleJudgesIt() {
        let alphabet = ["a", "Z", "7", "_", "-", ".", " ", "é", "\u{301}", "/"]
        var paths = [""]
        for _ in 0..<4 {
            paths = paths.flatMap { path in alphabet.map { path + $0 } }
            for path in paths where ((try? KeyPath(path)) != nil) != Self.byTheRule(path) {
                Issue.record("\(path.debugDescription) judged otherwise")
            }
        }
    }

    @Test func aWrongPathNamesItsField() {
        #expect(throws: PanesError.self) { try KeyPath("a..b", field: "keyPaths[2]") }
        do {
            _ = try KeyPath("a..b", field: "keyPaths[2]")
        } catch {
            #expect(error.field == "keyPaths[2]")
            #expect(error.code == .invalidKeyPath)
        }
    }
}
