// Threading: a `PublicKey` is made once while the key file is read, at start-up, and then only
// read: signatures are verified with it on the service thread (`connect`, `refreshToken`).
// OpenSSL 3 allows concurrent read-only use of one EVP_PKEY (each verification makes its own
// EVP_MD_CTX), so sharing it is safe; nothing changes it after `init`.
internal import COpenSSL
import Synchronization

/// A PEM public key read by libcrypto once, when the key file is read: its type, size and curve
/// are checked at start instead of failing token by token, and every RS256 or ES256 signature
/// is verified with it. Parsing a PEM is most of a check's cost with OpenSSL 3 (about 75 %
/// measured), so it is never parsed again per token: a flood of tokens with random signatures
/// costs the server a signature verification each, not a parse and a verification.
///
/// Owns one `EVP_PKEY*`, freed on release.
final class PublicKey: @unchecked Sendable {
    enum Kind: Equatable {
        case rsa(bits: Int)
        /// `curve` is OpenSSL's short name, `prime256v1` for P-256.
        case ec(curve: String)
        case other
    }

    private let handle: OpaquePointer

    /// Nil when `pem` is not a PEM public key (`-----BEGIN PUBLIC KEY-----`).
    init?(pem: [UInt8]) {
        Self.parses?.add()
        let key = pem.withUnsafeBytes { pso_read_public_key($0.baseAddress, Int32($0.count)) }
        guard let key else { return nil }
        handle = key
    }

    deinit { EVP_PKEY_free(handle) }

    var kind: Kind {
        if pso_key_is_rsa(handle) == 1 { return .rsa(bits: Int(EVP_PKEY_get_bits(handle))) }
        if pso_key_is_ec(handle) == 1 {
            var name = [CChar](repeating: 0, count: 64)
            guard pso_ec_curve_name(handle, &name, name.count) == 1 else { return .ec(curve: "unknown") }
            return .ec(curve: String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return .other
    }

    /// Whether `signature` signs `message` with SHA-256 under this key: RSASSA-PKCS1-v1_5 for an
    /// RSA key; ECDSA for an EC key, the signature given as JWS writes it (`R‖S`, 64 bytes).
    func verifiesSHA256(_ signature: [UInt8], of message: [UInt8], rawECDSA: Bool) -> Bool {
        var signature = signature
        if rawECDSA {
            var der = [UInt8](repeating: 0, count: 80)
            let length = signature.withUnsafeBufferPointer { raw in
                der.withUnsafeMutableBufferPointer { pso_ecdsa_raw_to_der(raw.baseAddress, raw.count, $0.baseAddress, $0.count) }
            }
            guard length > 0 else { return false }
            signature = Array(der.prefix(Int(length)))
        }
        return message.withUnsafeBufferPointer { message in
            signature.withUnsafeBufferPointer { signature in
                pso_verify_sha256(handle, message.baseAddress, message.count, signature.baseAddress, signature.count) == 1
            }
        }
    }

    /// Counts the PEM parses made by the task that binds it, here and by libjwt (`JWTHandle`):
    /// how a test shows keys are parsed when the key file is read, never per token (a
    /// process-wide count would see other tests' parses, which run at the same time).
    @TaskLocal static var parses: ParseCount?

    /// How a PEM text begins.
    static let pemStart = Array("-----BEGIN".utf8)

    final class ParseCount: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }
    }
}
