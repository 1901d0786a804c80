public import PanesCore

extension SecretHasher {
    /// What the server uses: SHA-256 (its 32 bytes for session secrets, as lowercase hex for
    /// the others); HMAC-SHA-256.
    public static let sha256: SecretHasher = {
        // libcrypto looks SHA-256 up in its providers at the first digest (about 5 million
        // instructions, once per process, `pso_sha256_md`): done here, as the server starts,
        // not in the first window to resume after a restart.
        _ = Digest.secretHash("")
        return SecretHasher(
            digest: { Digest.secretHash($0) },
            hash: { Digest.sha256Hex($0) },
            mac: { Digest.hmacSHA256(key: $0, message: $1) })
    }()
}
