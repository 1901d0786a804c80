@testable import PanesCore
import Testing

/// `MessageDecoder`'s shared checks.
@Suite struct MessageDecoderTests {
    /// The rule as written before the bit sets: 1 to 64 bytes, each an ASCII letter, digit, `.`,
    /// `_` or `-`.
    static func isNameByRule(_ string: String) -> Bool {
        !string.isEmpty && string.utf8.count <= 64 && string.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// Every byte alone, at the start, in the middle and at the end of a name, and every length
    /// around the limit, inline (up to 15 bytes) and in storage: a name exactly when the rule says.
    @Test func aNameIsOneToSixtyFourLettersDigitsDotsUnderscoresOrHyphens() {
        var candidates = ["", "é", "e\u{301}", "ws\u{0}", "ws one", "a/b", "ws.1_b-C"]
        for scalar in (0..<0x80).compactMap(Unicode.Scalar.init) + ["\u{80}", "\u{FF}", "\u{FFFD}"] {
            let character = String(scalar)
            candidates += [character, character + "ws", "w" + character + "s", "ws" + character,
                           String(repeating: "n", count: 40) + character]
        }
        candidates += (60...70).map { String(repeating: "a", count: $0) }
        candidates += [String(decoding: [0x61, 0xC3], as: UTF8.self)]
        for candidate in candidates {
            #expect(MessageDecoder.isName(candidate) == Self.isNameByRule(candidate), "\(Array(candidate.utf8))")
        }
        #expect(MessageDecoder.isName(String(repeating: "a", count: 64)) && !MessageDecoder.isName(String(repeating: "a", count: 65)))
        #expect(MessageDecoder.isName("ws.1_b-C") && !MessageDecoder.isName("a/b"))
    }
}
