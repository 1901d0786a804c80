public import PanesCore

extension SecretHasher {
    /// What the server uses: SHA-256 as lowercase hex, compared with `CRYPTO_memcmp`; HMAC-SHA-256.
    public static let sha256 = SecretHasher(
        hash: { Digest.sha256Hex($0) },
        equal: { Digest.constantTimeEqual($0, $1) },
        mac: { Digest.hmacSHA256(key: $0, message: $1) })
}
