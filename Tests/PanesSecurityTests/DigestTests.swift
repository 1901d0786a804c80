import PanesCore
import PanesSecurity
import Testing

@Suite struct DigestTests {
    @Test func sha256MatchesTheStandardTestVector() {
        // FIPS 180-2, appendix B.1.
        #expect(Digest.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func hmacSHA256MatchesRFC4231() {
        // RFC 4231, test case 2.
        let mac = Digest.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Digest.hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func constantTimeEqualComparesEveryByteAndTheLength() {
        #expect(Digest.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!Digest.constantTimeEqual([9, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(Digest.constantTimeEqual([], []))
    }

    @Test func constantTimeEqualOfStringsComparesTheirBytes() {
        #expect(Digest.constantTimeEqual("abc", "abc"))
        #expect(!Digest.constantTimeEqual("abc", "abd"))
        #expect(!Digest.constantTimeEqual("abc", "ab"))
        #expect(Digest.constantTimeEqual("", ""))
        // Canonically equivalent is not equal: a precomposed é and e + combining acute differ.
        #expect(!Digest.constantTimeEqual("\u{E9}", "e\u{301}"))
        let long = String(repeating: "0123456789abcdef", count: 4)
        #expect(Digest.constantTimeEqual(long, String(long)))
    }

    @Test func theServersSecretHasherStoresSHA256HexAndMatchesOnlyTheSecret() {
        let hasher = SecretHasher.sha256
        let stored = hasher.hash("0123456789abcdef0123456789abcdef")
        #expect(stored == Digest.sha256Hex("0123456789abcdef0123456789abcdef"))
        #expect(stored.count == 64 && !stored.contains("0123456789abcdef0123456789abcdef"))
        #expect(hasher.matches("0123456789abcdef0123456789abcdef", stored: stored))
        #expect(!hasher.matches("0123456789abcdef0123456789abcdee", stored: stored))
        // Knowing the stored hash is no help: it is not itself accepted as the secret.
        #expect(!hasher.matches(stored, stored: stored))
    }
}
