import PanesCore
import Testing

/// A session secret's hash is held as its 32 bytes (issue 27: memory per idle scene) and read
/// from and written to stores as the 64 lowercase hex digits every build has written.
@Suite struct SecretHashTests {
    /// SHA-256 of "abc" (FIPS 180-2, appendix B.1), as stores hold it.
    static let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    @Test func theStoredHexReadsBackAsItsBytesAndIsWrittenAsTheSameText() throws {
        let hash = SecretHash(stored: Self.abc)
        #expect(hash.hex == Self.abc)
        #expect(hash.bytes.prefix(4) == [0xba, 0x78, 0x16, 0xbf] && hash.bytes.last == 0xad)
        #expect(try #require(SecretHash(bytes: hash.bytes)) == hash)
        #expect(hash != .unmatchable)
    }

    @Test func aStoredFormThatIsNotLowercaseHexOfThirtyTwoBytesMatchesNothing() {
        for damaged in [Self.abc.uppercased(), String(Self.abc.dropLast()), Self.abc + "0", Self.abc + "00", "",
                        "x", String(Self.abc.dropLast()) + "g", String(Self.abc.dropLast()) + "é"] {
            #expect(SecretHash(stored: damaged) == .unmatchable, "\(damaged)")
        }
        #expect(SecretHash.unmatchable.hex == String(repeating: "f", count: 64))
        // What a store writes: the hex of a hash, nothing (keep the text held) for one read from
        // a damaged stored form.
        #expect(SecretHash(stored: Self.abc).storedText == Self.abc)
        #expect(SecretHash.unmatchable.storedText == nil)
        #expect(SecretHash(bytes: [UInt8](repeating: 0, count: 31)) == nil)
    }

    @Test func twoHashesAreEqualOnlyIfEveryByteIs() throws {
        let bytes = SecretHash(stored: Self.abc).bytes
        for index in bytes.indices {
            var other = bytes
            other[index] ^= 0x01
            #expect(try #require(SecretHash(bytes: other)) != SecretHash(stored: Self.abc), "byte \(index)")
        }
    }
}
