/// How session secrets are kept: only a hash is stored (on disk and in memory), and a secret a
/// client presents is hashed and compared with it in constant time.
///
/// The core imports no C, so the hash is injected: the server passes `PanesSecurity`'s
/// SHA-256 (`SecretHasher.sha256`); core tests pass a trivial one. Secrets are 128 random bits,
/// so a plain cryptographic hash is enough: there is nothing to guess, hence no salt or slow KDF.
public struct SecretHasher: Sendable {
    /// The stored form of a secret (for SHA-256: 64 lowercase hex digits).
    public let hash: @Sendable (_ secret: String) -> String
    /// Compares two stored forms in time that does not depend on where they differ.
    public let equal: @Sendable (_ a: String, _ b: String) -> Bool
    /// HMAC-SHA-256 of a message under a key, for secrets derived rather than kept (a keyed
    /// `createDocumentLink`'s token, `DocumentRights.keyedToken`); nil where none is given, and
    /// then such secrets are random instead.
    public let mac: (@Sendable (_ key: [UInt8], _ message: [UInt8]) -> [UInt8])?

    public init(hash: @escaping @Sendable (String) -> String, equal: @escaping @Sendable (String, String) -> Bool,
                mac: (@Sendable ([UInt8], [UInt8]) -> [UInt8])? = nil) {
        self.hash = hash
        self.equal = equal
        self.mac = mac
    }

    /// Whether `secret` is the one whose hash is `stored`.
    public func matches(_ secret: String, stored: String) -> Bool {
        equal(hash(secret), stored)
    }
}
