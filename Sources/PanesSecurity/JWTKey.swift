public import PanesCore

/// One verification key from the key file: its id, the one algorithm it verifies, and its
/// material (the HS256 secret's bytes, or the PEM text of an RS256 or ES256 public key).
public struct JWTKey: Sendable, Equatable {
    /// The `kid` a token's header names to select this key.
    public let id: String
    public let algorithm: JWTAlgorithm
    /// What libjwt is given as the key: secret bytes for HS256, PEM text otherwise.
    let material: [UInt8]

    /// The shortest HS256 secret accepted: RFC 7518 §3.2 asks for at least the hash's size.
    public static let minimumSecretBytes = 32
    /// The smallest RSA modulus accepted (RFC 7518 §3.3).
    public static let minimumRSABits = 2048

    /// An HS256 key.
    /// - Throws: when the secret is shorter than `minimumSecretBytes`.
    public init(id: String, secret: [UInt8]) throws(PanesError) {
        guard secret.count >= Self.minimumSecretBytes else {
            throw .invalid("keys.\(id).secret",
                           "is \(secret.count) bytes; an HS256 secret needs at least \(Self.minimumSecretBytes)")
        }
        self.id = id
        self.algorithm = .hs256
        self.material = secret
    }

    /// An RS256 or ES256 key from a PEM public key, checked now: the right type, an RSA key of
    /// at least `minimumRSABits`, an EC key on P-256.
    public init(id: String, algorithm: JWTAlgorithm, publicKeyPEM pem: String) throws(PanesError) {
        let field = "keys.\(id).publicKey"
        guard algorithm != .hs256 else { throw .invalid("keys.\(id).alg", "HS256 takes a `secret`, not a public key") }
        guard let key = PublicKey(pem: Array(pem.utf8)) else {
            throw .invalid(field, "is not a PEM public key (`-----BEGIN PUBLIC KEY-----`); never put a private key here")
        }
        switch (algorithm, key.kind) {
        case (.rs256, .rsa(let bits)):
            guard bits >= Self.minimumRSABits else {
                throw .invalid(field, "is a \(bits)-bit RSA key; RS256 needs at least \(Self.minimumRSABits) bits")
            }
        case (.es256, .ec(let curve)):
            guard curve == "prime256v1" else {
                throw .invalid(field, "is an EC key on \(curve); ES256 needs P-256 (prime256v1)")
            }
        case (.rs256, _):
            throw .invalid(field, "is not an RSA public key, which RS256 needs")
        case (.es256, _):
            throw .invalid(field, "is not an EC public key, which ES256 needs")
        case (.hs256, _):
            preconditionFailure("handled above")
        }
        self.id = id
        self.algorithm = algorithm
        self.material = Array(pem.utf8)
    }
}
