// Threading: a `PublicKey` is made once while the key file is read, at start-up, inspected,
// and released; it is never shared between threads.
internal import COpenSSL

/// A PEM public key read by libcrypto, so a key file's RS256 and ES256 keys are checked at
/// start (type, size, curve) instead of failing token by token.
///
/// Owns one `EVP_PKEY*`, freed on release.
final class PublicKey {
    enum Kind: Equatable {
        case rsa(bits: Int)
        /// `curve` is OpenSSL's short name, `prime256v1` for P-256.
        case ec(curve: String)
        case other
    }

    private let handle: OpaquePointer

    /// Nil when `pem` is not a PEM public key (`-----BEGIN PUBLIC KEY-----`).
    init?(pem: [UInt8]) {
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
}
