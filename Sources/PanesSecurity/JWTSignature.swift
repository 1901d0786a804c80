// Threading: libjwt keeps no global state; each `JWTHandle` is made, read and freed inside
// one `verify` call on the calling thread (the service thread, for `connect` and
// `refreshToken`), so nothing here is shared. libjwt 1.10 decodes with `alloca` sized by the
// token, which is why tokens are capped (`maxTokenBytes`) before they get here. The RS256 and
// ES256 keys are `PublicKey`s parsed once and only read (see its threading note).
internal import CJWT
import PanesCore

/// Checks a token's signature against the ONE key its `kid` selected, with that key's
/// algorithm only.
///
/// RS256 and ES256 are verified by libcrypto with the key parsed when the key file was read
/// (`JWTKey.publicKey`): libjwt 1.10 would parse the PEM text again for every token, which is
/// most of a check's cost, and a flood of tokens with random signatures would make the server
/// pay it every time. The algorithm is the key's, whatever the header says.
///
/// HS256 goes through libjwt as well. libjwt 1.10 verifies with whatever algorithm the token's
/// header names, using the key it is given: handed an RSA public key and a header saying
/// HS256, it would check an HMAC keyed with the PEM text, which anyone holding the public key
/// can forge. So the caller has already refused a header whose `alg` differs from the key's,
/// libjwt is only ever given HS256 secrets, and this checks again what libjwt actually used.
/// libjwt also compares HMACs with `strcmp`, which leaks timing; an HS256 MAC is therefore
/// compared here in constant time first, and libjwt only ever sees correct ones.
enum JWTSignature {
    static func verify(_ token: String, parts: JWTParts, key: JWTKey) throws(PanesError) {
        switch key.algorithm {
        case .rs256, .es256:
            guard let publicKey = key.publicKey,
                  publicKey.verifiesSHA256(parts.signature, of: parts.signingInput, rawECDSA: key.algorithm == .es256)
            else { throw invalidSignature }
        case .hs256:
            let expected = Digest.hmacSHA256(key: key.material, message: parts.signingInput)
            guard Digest.constantTimeEqual(expected, parts.signature) else { throw invalidSignature }
            guard let handle = JWTHandle(decoding: token, key: key.material) else { throw invalidSignature }
            guard handle.algorithm == key.algorithm.libjwt else {
                throw PanesError(.unauthenticated, "the token was verified with \(handle.algorithmName), not the key's "
                                     + "\(key.algorithm.rawValue)")
            }
        }
    }

    private static let invalidSignature = PanesError(.unauthenticated, "the token's signature is not valid for its key")
}

/// One decoded `jwt_t`, freed on release.
///
/// Lives inside one call on one thread (see the file's threading note); not `Sendable`.
final class JWTHandle {
    private let handle: OpaquePointer

    /// Decodes and verifies `token` with `key`; nil when libjwt refuses it (bad signature,
    /// malformed, `alg: none` with a key).
    init?(decoding token: String, key: [UInt8]) {
        precondition(!key.isEmpty, "libjwt skips verification without a key; never call it without one")
        // libjwt reads a PEM key anew on every call: counted with ours (`PublicKey.parses`).
        if key.starts(with: PublicKey.pemStart) { PublicKey.parses?.add() }
        var decoded: OpaquePointer?
        let code = key.withUnsafeBufferPointer { key in
            jwt_decode(&decoded, token, key.baseAddress, Int32(key.count))
        }
        guard code == 0, let decoded else { return nil }
        handle = decoded
    }

    deinit { jwt_free(handle) }

    var algorithm: jwt_alg_t { jwt_get_alg(handle) }

    var algorithmName: String { jwt_alg_str(algorithm).map { String(cString: $0) } ?? "an unknown algorithm" }
}

extension JWTAlgorithm {
    /// libjwt's constant for the algorithm.
    var libjwt: jwt_alg_t {
        switch self {
        case .hs256: JWT_ALG_HS256
        case .rs256: JWT_ALG_RS256
        case .es256: JWT_ALG_ES256
        }
    }
}
