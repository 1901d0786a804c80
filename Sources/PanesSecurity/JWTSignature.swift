// Threading: libjwt keeps no global state; each `JWTHandle` is made, read and freed inside
// one `verify` call on the calling thread (the service thread, for `connect` and
// `refreshToken`), so nothing here is shared. libjwt 1.10 decodes with `alloca` sized by the
// token, which is why tokens are capped (`maxTokenBytes`) before they get here.
internal import CJWT
import PanesCore

/// Checks a token's signature with libjwt against the ONE key its `kid` selected.
///
/// libjwt 1.10 verifies with whatever algorithm the token's header names, using the key it is
/// given. Handed an RSA public key and a header saying HS256, it would check an HMAC keyed
/// with the PEM text, which anyone holding the public key can forge. So the caller has already
/// refused a header whose `alg` differs from the key's, and this checks again what libjwt
/// actually used. libjwt also compares HMACs with `strcmp`, which leaks timing; an HS256 MAC is
/// therefore compared here in constant time first, and libjwt only ever sees correct ones.
enum JWTSignature {
    static func verify(_ token: String, parts: JWTParts, key: JWTKey) throws(PanesError) {
        if key.algorithm == .hs256 {
            let expected = Digest.hmacSHA256(key: key.material, message: parts.signingInput)
            guard Digest.constantTimeEqual(expected, parts.signature) else { throw invalidSignature }
        }
        guard let handle = JWTHandle(decoding: token, key: key.material) else { throw invalidSignature }
        guard handle.algorithm == key.algorithm.libjwt else {
            throw PanesError(.unauthenticated, "the token was verified with \(handle.algorithmName), not the key's "
                                 + "\(key.algorithm.rawValue)")
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
