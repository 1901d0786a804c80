/// The signature algorithms a key can be configured for. The key fixes the algorithm; a
/// token's `alg` header must name the same one or the token is refused before any
/// cryptography runs (no `none`, no HS256 with a public key as the secret).
public enum JWTAlgorithm: String, Sendable, CaseIterable {
    /// HMAC with SHA-256 and a shared secret of at least 32 bytes.
    case hs256 = "HS256"
    /// RSASSA-PKCS1-v1_5 with SHA-256 and an RSA public key of at least 2048 bits.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256.
    case es256 = "ES256"
}
