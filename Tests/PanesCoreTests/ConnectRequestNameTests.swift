@testable import PanesCore
import Testing

/// `auth.name` loses leading and trailing whitespace, character by character; a name that
/// needs no trimming is taken as it is without walking its characters.
@Suite struct ConnectRequestNameTests {
    /// The definition: from the first character that is not whitespace to the last.
    static func reference(_ name: String) -> String? {
        guard let first = name.firstIndex(where: { !$0.isWhitespace }), let last = name.lastIndex(where: { !$0.isWhitespace })
        else { return nil }
        return String(name[first...last])
    }

    @Test(arguments: ["alice", " alice", "alice ", "\talice\n", "   ", "", "a", "a b", "\u{301}a", "a\u{301}",
                      " \u{301}a", "a \u{301}", "\u{600}a", "x\u{600}a", "\u{A0}alice\u{A0}", "\u{2003}a\u{2003}",
                      "\r\n", "a\r\n", "é", "\u{1F600}", "a\u{200D}b", "\u{85}a", "a\u{85}", "\u{1C}a\u{1F}"])
    func trimmingKeepsItsDefinition(_ name: String) {
        #expect(ConnectRequest.trimmed(name) == Self.reference(name))
        #expect(ConnectRequest.trimmed(name).map { Array($0.utf8) } == Self.reference(name).map { Array($0.utf8) })
    }

    @Test func randomNamesAreTrimmedAsDefined() {
        let pieces: [String] = ["a", "Z", "0", " ", "\t", "\n", "\u{301}", "\u{600}", "\u{A0}", "\u{2028}", "é", "e\u{301}",
                                "\u{200D}", "\u{1F600}", "\u{85}", "\u{1C}", "-"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let name = (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(ConnectRequest.trimmed(name).map { Array($0.utf8) } == Self.reference(name).map { Array($0.utf8) },
                    "\(Array(name.unicodeScalars))")
        }
    }
}
