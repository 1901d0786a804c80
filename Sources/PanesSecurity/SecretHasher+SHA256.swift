public import PanesCore

extension SecretHasher {
    /// What the server uses: SHA-256 (its 32 bytes for session secrets, as lowercase hex for
    /// the others); HMAC-SHA-256.
    public static let sha256 = SecretHasher(
        digest: { Digest.secretHash($0) },
        hash: { Digest.sha256Hex($0) },
        mac: { Digest.hmacSHA256(key: $0, message: $1) })
}
