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

    @Test func theServersSecretHasherKeepsSHA256AndMatchesOnlyTheSecret() {
        let hasher = SecretHasher.sha256
        let secret = "0123456789abcdef0123456789abcdef"
        let stored = hasher.digest(secret)
        #expect(stored.hex == Digest.sha256Hex(secret) && hasher.hash(secret) == stored.hex)
        #expect(Digest.secretHash("abc").hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(!stored.hex.contains(secret))
        #expect(hasher.matches(secret, stored: stored))
        #expect(!hasher.matches("0123456789abcdef0123456789abcdee", stored: stored))
        // The same text in other case, shorter or longer, is another secret.
        #expect(!hasher.matches(secret.uppercased(), stored: stored))
        #expect(!hasher.matches(String(secret.dropLast()), stored: stored) && !hasher.matches(secret + "0", stored: stored))
        // Knowing the stored hash is no help: it is not itself accepted as the secret.
        #expect(!hasher.matches(stored.hex, stored: stored))
        // A string whose UTF-8 is not contiguous (bridged, or a substring's copy) hashes the same.
        #expect(hasher.digest(String(Substring(secret))) == stored)
    }

    @Test func hashingOnManyThreadsAtOnceGivesEachTheRightDigest() async {
        // The digest context is per thread (COpenSSL's pso_sha256): threads never share one.
        let expected = (0..<64).map { Digest.sha256Hex("secret-\($0)") }
        await withTaskGroup(of: (Int, String).self) { group in
            for index in 0..<64 {
                group.addTask { (index, Digest.secretHash("secret-\(index)").hex) }
            }
            for await (index, hex) in group { #expect(hex == expected[index]) }
        }
    }
}
