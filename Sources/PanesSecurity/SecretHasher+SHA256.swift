public import PanesCore

extension SecretHasher {
    /// What the server uses: SHA-256 (its 32 bytes for session secrets, as lowercase hex for
    /// the others); HMAC-SHA-256.
    public static let sha256: SecretHasher = {
        // One digest as the server starts, so nothing libcrypto sets up at its first use is
        // paid by the first window to resume after a restart (through EVP that was the look-up
        // of SHA-256 in its providers, ~5 million instructions; `pso_sha256` no longer goes
        // through EVP).
        _ = Digest.secretHash("")
        return SecretHasher(
            digest: { Digest.secretHash($0) },
            hash: { Digest.sha256Hex($0) },
            mac: { Digest.hmacSHA256(key: $0, message: $1) })
    }()
}
