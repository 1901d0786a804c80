import Foundation
@testable import PanesCore
import Testing

/// Identifiers held in two words (`InlineIdentifier`) are still their bytes (CONCEPTS.md,
/// invariant 10): equal, hashed and ordered as their UTF-8 bytes, on both sides of the
/// boundary between the packed form and a `String`.
@Suite struct InlineIdentifierTests {
    static let hex32 = "0123456789abcdef0f1e2d3c4b5a6978"
    static let scene = "scn_00ff10ee20dd30cc40bb50aa"

    @Test func theMintedFormsArePackedAndReadBackAsTheyWere() {
        let minted = [Self.hex32, Self.scene, IdentifierSource.system.sessionID().rawValue,
                      IdentifierSource.system.token("scn_"), "abc_" + String(repeating: "f", count: 24),
                      "x" + String(repeating: "0", count: 30), "\u{7F}\u{0}" + String(repeating: "9", count: 28)]
        for text in minted {
            let id = InlineIdentifier(text)
            #expect(id.isPacked, "\(text)")
            #expect(Array(id.string.utf8) == Array(text.utf8))
            #expect(id.withUTF8 { Array($0) } == Array(text.utf8))
        }
        #expect(SessionID(Self.hex32).bytes.isPacked && SceneID(Self.scene).bytes.isPacked)
        #expect(SessionID(Self.hex32).rawValue == Self.hex32 && SceneID(Self.scene).description == Self.scene)
    }

    /// `init(prefix:random:)` packs the bytes themselves: it must be the value the text they
    /// spell packs to, equal, hashed and written out alike, for any bytes.
    @Test func anIdentifierPackedFromItsRandomBytesIsTheOneItsTextMakes() {
        var samples: [[UInt8]] = [Array(repeating: 0, count: 12), Array(repeating: 0xFF, count: 12),
                                  (0..<12).map { UInt8($0 * 17) }, (0..<12).map { UInt8(0xF0 - $0) }]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 { samples.append((0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
        for bytes in samples {
            let text = "scn_" + bytes.map { String(format: "%02x", $0) }.joined()
            let packed = bytes.withUnsafeBytes { InlineIdentifier(prefix: "scn_", random: $0) }
            #expect(packed == InlineIdentifier(text), "\(text)")
            #expect(packed?.hashValue == InlineIdentifier(text).hashValue)
            #expect(packed?.string == text && packed?.isPacked == true)
        }
        let sixteen = (0..<16).map { UInt8($0 * 15) }
        #expect(sixteen.withUnsafeBytes { InlineIdentifier(prefix: "", random: $0) }
            == InlineIdentifier(sixteen.map { String(format: "%02x", $0) }.joined()))
        // Not the 16 bytes of the packed form, or a prefix that is not ASCII: no identifier.
        #expect([UInt8](repeating: 1, count: 11).withUnsafeBytes { InlineIdentifier(prefix: "scn_", random: $0) } == nil)
        #expect([UInt8](repeating: 1, count: 13).withUnsafeBytes { InlineIdentifier(prefix: "scn_", random: $0) } == nil)
        #expect([UInt8](repeating: 1, count: 14).withUnsafeBytes { InlineIdentifier(prefix: "\u{E9}", random: $0) } == nil)
    }

    /// Made from bytes (a frame's, `SessionID(utf8:)`), an identifier is the one its text makes,
    /// in the same form, on both sides of the boundary.
    @Test func anIdentifierMadeFromItsBytesIsTheOneItsTextMakes() {
        let texts = [Self.hex32, Self.scene, String(Self.hex32.dropLast()) + "F", Self.hex32 + "0",
                     String(Self.scene.dropLast()), "sc\u{E9}" + String(repeating: "0", count: 26), "", "s1",
                     "e\u{301}" + String(repeating: "a", count: 29), String(repeating: "0", count: 64)]
        for text in texts {
            let fromBytes = Array(text.utf8).withUnsafeBytes { InlineIdentifier(utf8: $0) }
            #expect(fromBytes == InlineIdentifier(text) && fromBytes.isPacked == InlineIdentifier(text).isPacked, "\(text)")
            #expect(fromBytes.utf8Count == text.utf8.count && Array(fromBytes.string.utf8) == Array(text.utf8))
            #expect(Array(text.utf8).withUnsafeBytes { SessionID(utf8: $0) } == SessionID(text))
        }
    }

    @Test func everythingElseIsKeptAsItsString() {
        let others = [
            String(Self.hex32.dropLast()) + "F",  // upper-case digit
            Self.hex32 + "0",  // 33 bytes
            String(Self.scene.dropLast()),  // 27 bytes
            "scn_00ff10ee20dd30cc40bb50ag",  // not a digit
            "sc\u{E9}" + String(repeating: "0", count: 26),  // a non-ASCII prefix (29 bytes)
            "", "s1", "scn_1",
        ]
        for text in others {
            let id = InlineIdentifier(text)
            #expect(!id.isPacked, "\(text)")
            #expect(Array(id.string.utf8) == Array(text.utf8))
            #expect(id.withUTF8 { Array($0) } == Array(text.utf8))
        }
    }

    @Test func equalBytesAreEqualAndHashAlikeWhateverTheStringsStorage() {
        for text in [Self.hex32, Self.scene, "scn_1", String(repeating: "q", count: 40)] {
            let rebuilt = String(decoding: Array(text.utf8), as: UTF8.self)
            let sliced = String(("<" + text + ">").dropFirst().dropLast())
            for other in [rebuilt, sliced] {
                #expect(InlineIdentifier(text) == InlineIdentifier(other))
                #expect(InlineIdentifier(text).hashValue == InlineIdentifier(other).hashValue)
                #expect(SessionID(text) == SessionID(other) && SceneID(text).hashValue == SceneID(other).hashValue)
            }
        }
    }

    @Test func canonicallyEquivalentIdentifiersAcrossTheBoundaryStayDifferent() {
        // KELVIN SIGN (3 bytes) normalises to `K`: Swift's String calls these equal; one is packed
        // (28 bytes, ASCII prefix), the other is 30 bytes with a non-ASCII prefix, kept as text.
        let digits = String(repeating: "a", count: 24)
        let ascii = "Kabc" + digits, kelvin = "\u{212A}abc" + digits
        #expect(ascii == kelvin && Array(ascii.utf8) != Array(kelvin.utf8))
        #expect(InlineIdentifier(ascii).isPacked && !InlineIdentifier(kelvin).isPacked)
        #expect(SessionID(ascii) != SessionID(kelvin))
        #expect(Set([SceneID(ascii), SceneID(kelvin)]).count == 2)
        #expect((SessionID(ascii) < SessionID(kelvin)) == Array(ascii.utf8).lexicographicallyPrecedes(Array(kelvin.utf8)))
        #expect((SessionID(ascii) < SessionID(kelvin)) != (SessionID(kelvin) < SessionID(ascii)))
        // Both as text (too long to pack): NFC and NFD stay apart.
        let nfc = "jos\u{E9}" + Self.hex32, nfd = "jose\u{301}" + Self.hex32
        #expect(nfc == nfd && SessionID(nfc) != SessionID(nfd) && Set([SessionID(nfc), SessionID(nfd)]).count == 2)
    }

    @Test func identifiersOnBothSidesOfTheBoundarySortAndCompareByTheirBytes() {
        // Texts of 26…34 bytes from an alphabet that makes both forms: hex digits, an upper-case
        // digit, an underscore, a byte above 0x7F (in `é`); all pairs, both orders.
        var generator = SplitMix64(seed: 27)
        let alphabet: [String] = ["0", "9", "a", "f", "F", "_", "s", "\u{E9}"]
        var texts: [String] = [Self.hex32, Self.scene]
        for _ in 0..<300 {
            let length = 26 + Int(generator.next() % 9)
            var text = ""
            // Mostly hex, so that many pack; now and then another character anywhere.
            for _ in 0..<length {
                let roll = Int(generator.next() % 16)
                text += roll < 12 ? alphabet[roll % 4] : alphabet[roll % alphabet.count]
            }
            texts.append(text)
        }
        let ids = texts.map(InlineIdentifier.init)
        #expect(ids.contains { $0.isPacked } && ids.contains { !$0.isPacked })
        for (i, a) in ids.enumerated() {
            for (j, b) in ids.enumerated() {
                let x = Array(texts[i].utf8), y = Array(texts[j].utf8)
                #expect((a == b) == (x == y))
                if x == y { #expect(a.hashValue == b.hashValue) }
                #expect((a < b) == x.lexicographicallyPrecedes(y))
            }
        }
        let sorted = ids.sorted().map { Array($0.string.utf8) }
        #expect(sorted == texts.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
    }
}
