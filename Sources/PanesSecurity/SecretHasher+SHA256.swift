public import PanesCore

extension SecretHasher {
    /// What the server uses: SHA-256 as lowercase hex, compared with `CRYPTO_memcmp`.
    public static let sha256 = SecretHasher(
        hash: { Digest.sha256Hex($0) },
        equal: { Digest.constantTimeEqual($0, $1) })
}
