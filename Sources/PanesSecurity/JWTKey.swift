public import PanesCore

/// One verification key from the key file: its id, the one algorithm it verifies, and its
/// material (the HS256 secret's bytes, or an RS256 or ES256 public key, parsed once here).
public struct JWTKey: Sendable, Equatable {
    /// The `kid` a token's header names to select this key.
    public let id: String
    public let algorithm: JWTAlgorithm
    /// The HS256 secret's bytes (what libjwt is given too), or the public key's PEM text.
    let material: [UInt8]
    /// The RS256 or ES256 public key, parsed when the key file was read and kept: signatures
    /// are verified with it, never with the PEM text again. Nil for HS256.
    let publicKey: PublicKey?

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
        self.publicKey = nil
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
        self.publicKey = key
    }

    /// The same id, algorithm and material: the parsed key follows from them.
    public static func == (a: Self, b: Self) -> Bool {
        a.id == b.id && a.algorithm == b.algorithm && a.material == b.material
    }
}
