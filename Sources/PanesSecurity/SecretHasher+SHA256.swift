public import PanesCore

extension SecretHasher {
    /// What the server uses: SHA-256 as lowercase hex, compared with `CRYPTO_memcmp`.
    public static let sha256 = SecretHasher(
        hash: { Digest.sha256Hex($0) },
        equal: { Digest.constantTimeEqual(Array($0.utf8), Array($1.utf8)) })
}
