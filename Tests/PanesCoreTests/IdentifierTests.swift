import PanesCore
import Testing

/// Identities are their bytes (CONCEPTS.md, invariant 10): every identifier type compares,
/// hashes and sorts by its UTF-8 bytes, where Swift's `String` would call canonically
/// equivalent texts equal.
@Suite struct IdentifierTests {
    /// Pairs Swift's `String ==` calls equal although their bytes differ: NFC and NFD, and the
    /// singletons that normalise to another character (OHM SIGN to Ω, KELVIN SIGN to `K`).
    static let equivalentPairs: [(String, String)] = [
        ("jos\u{E9}", "jose\u{301}"),
        ("\u{2126}", "\u{3A9}"),
        ("\u{212A}team", "Kteam"),
        ("caf\u{E9}-\u{2126}-long-enough-to-be-stored-outside-the-string", "cafe\u{301}-\u{3A9}-long-enough-to-be-stored-outside-the-string"),
    ]

    @Test func theTestPairsAreEqualToSwiftsStringButNotInBytes() {
        for (a, b) in Self.equivalentPairs {
            #expect(a == b, "Swift's String compares canonically; the pairs rely on it")
            #expect(Array(a.utf8) != Array(b.utf8))
            #expect(Set([a, b]).count == 1)
        }
    }

    /// Equal when the bytes are, however each string was made (inline up to 15 bytes, a
    /// storage object above, copies sharing one or not): one byte changed anywhere, or one
    /// more, makes them different.
    @Test func identifiersAreEqualExactlyWhenTheirBytesAre() {
        for length in 0...40 {
            let bytes = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            let made = String(decoding: bytes, as: UTF8.self)
            let again = String(decoding: bytes, as: UTF8.self)
            let copy = made
            #expect(Identifier.equal(made, again) && Identifier.equal(made, copy) && Identifier.equal(again, made))
            #expect(!Identifier.equal(made, again + "a") && !Identifier.equal(made + "a", again))
            for index in bytes.indices {
                var changed = bytes
                changed[index] = UInt8(ascii: "Z")
                #expect(!Identifier.equal(made, String(decoding: changed, as: UTF8.self)))
            }
        }
    }

    @Test(arguments: IdentifierTests.equivalentPairs.indices)
    func equivalentButDifferentBytesAreDifferentIdentifiers(_ index: Int) {
        let (a, b) = Self.equivalentPairs[index]
        #expect(!Identifier.equal(a, b))
        #expect(Identifier.equal(a, a) && Identifier.equal(b, String(decoding: Array(b.utf8), as: UTF8.self)))
        #expect(Identifier(a) != Identifier(b))
        #expect(Set([Identifier(a), Identifier(b)]).count == 2)
        #expect(Set([SessionID(a), SessionID(b)]).count == 2)
        #expect(Set([SceneID(a), SceneID(b)]).count == 2)
        #expect(Set([DocumentID(a), DocumentID(b)]).count == 2)
        #expect(Set([NodeID(a), NodeID(b)]).count == 2)
        #expect(Set([OwnerKey(workspace: "w", user: a), OwnerKey(workspace: "w", user: b)]).count == 2)
        #expect(Set([OwnerKey(workspace: a, user: "u"), OwnerKey(workspace: b, user: "u")]).count == 2)
        #expect(Set([PreferenceDomain(workspace: "w", user: a), PreferenceDomain(workspace: "w", user: b)]).count == 2)
        #expect(Set([Channel.coordination(.drag(Identifier(a))), Channel.coordination(.drag(Identifier(b)))]).count == 2)
        // Exactly one of the two sorts first, by bytes.
        #expect((Identifier(a) < Identifier(b)) != (Identifier(b) < Identifier(a)))
        #expect((Identifier(a) < Identifier(b)) == Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)))
    }

    @Test func equalBytesAreTheSameIdentifierWhateverTheStringsStorage() {
        let long = String(repeating: "x", count: 40) + "\u{E9}"
        let rebuilt = String(decoding: Array(long.utf8), as: UTF8.self)
        let small = "ab"
        let sliced = String("xaby".dropFirst().dropLast())
        #expect(Identifier(long) == Identifier(rebuilt))
        #expect(Identifier(long).hashValue == Identifier(rebuilt).hashValue)
        #expect(Identifier(small) == Identifier(sliced) && Identifier(small).hashValue == Identifier(sliced).hashValue)
        // Lengths around the eight-byte step of the comparison.
        for count in 0..<20 {
            let a = String(repeating: "a", count: count)
            #expect(Identifier.equal(a, String(repeating: "a", count: count)))
            if count > 0 { #expect(!Identifier.equal(a, String(repeating: "a", count: count - 1) + "b")) }
            #expect(!Identifier.equal(a, a + "a"))
        }
    }

    @Test func sortingIsByBytesNotByNormalisedText() {
        // NFD `e` + U+0301 is 65 CC 81, NFC `é` is C3 A9: the NFD one sorts first by bytes,
        // where Swift's `<` calls them neither smaller nor larger.
        let nfc = "jos\u{E9}", nfd = "jose\u{301}"
        #expect(!(nfc < nfd) && !(nfd < nfc))
        #expect(SessionID(nfd) < SessionID(nfc) && !(SessionID(nfc) < SessionID(nfd)))
        #expect([DocumentID(nfc), DocumentID(nfd), DocumentID("josf")].sorted() == [DocumentID(nfd), DocumentID("josf"), DocumentID(nfc)])
        #expect(OwnerKey(workspace: "a", user: nfc) < OwnerKey(workspace: "b", user: nfd))
        #expect(OwnerKey(workspace: "a", user: nfd) < OwnerKey(workspace: "a", user: nfc))
        #expect(PreferenceDomain(workspace: "a", user: nil) < PreferenceDomain(workspace: "a", user: nfd))
        #expect(PreferenceDomain(workspace: "a", user: nfd) < PreferenceDomain(workspace: "a", user: nfc))
    }

    @Test func composedKeysHashTheirPartsApart() {
        #expect(OwnerKey(workspace: "ab", user: "c") != OwnerKey(workspace: "a", user: "bc"))
        #expect(Set([OwnerKey(workspace: "ab", user: "c"), OwnerKey(workspace: "a", user: "bc")]).count == 2)
        #expect(PreferenceDomain(workspace: "w", user: nil) != PreferenceDomain(workspace: "w", user: ""))
        #expect(OwnerKey(workspace: "w", user: "u").hashValue == OwnerKey(workspace: "w", user: "u").hashValue)
    }

    @Test func tablesKeyedByIdentifierTakePlainStringsByTheirBytes() {
        var table: [Identifier: Int] = [:]
        table["jos\u{E9}"] = 1
        table["jose\u{301}", default: 10] += 1
        #expect(table.count == 2)
        #expect(table["jos\u{E9}"] == 1 && table["jose\u{301}"] == 11)
        #expect(table.removeValue(forKey: "jose\u{301}") == 11)
        #expect(table["jose\u{301}"] == nil && table["jos\u{E9}"] == 1)
    }
}
