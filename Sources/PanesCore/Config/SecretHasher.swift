/// How session secrets are kept: only a hash is stored (on disk and in memory), and a secret a
/// client presents is hashed and compared with it in constant time.
///
/// The core imports no C, so the hash is injected: the server passes `PanesSecurity`'s
/// SHA-256 (`SecretHasher.sha256`); core tests pass a trivial one. Secrets are 128 random bits,
/// so a plain cryptographic hash is enough: there is nothing to guess, hence no salt or slow KDF.
public struct SecretHasher: Sendable {
    /// A session secret's hash (SHA-256's 32 bytes), kept in its record and compared with `==`,
    /// in time that does not depend on where two differ.
    public let digest: @Sendable (_ secret: String) -> SecretHash
    /// The stored form of other secrets, document links' tokens and API keys (for SHA-256: 64
    /// lowercase hex digits, `digest`'s `hex`).
    public let hash: @Sendable (_ secret: String) -> String
    /// HMAC-SHA-256 of a message under a key, for secrets derived rather than kept (a keyed
    /// `createDocumentLink`'s token, `DocumentRights.keyedToken`); nil where none is given, and
    /// then such secrets are random instead.
    public let mac: (@Sendable (_ key: [UInt8], _ message: [UInt8]) -> [UInt8])?

    public init(digest: @escaping @Sendable (String) -> SecretHash, hash: @escaping @Sendable (String) -> String,
                mac: (@Sendable ([UInt8], [UInt8]) -> [UInt8])? = nil) {
        self.digest = digest
        self.hash = hash
        self.mac = mac
    }

    /// Whether `secret` is the one whose hash is `stored`: compared as 32 bytes, all of them
    /// whatever their values.
    public func matches(_ secret: String, stored: SecretHash) -> Bool {
        digest(secret) == stored
    }
}
