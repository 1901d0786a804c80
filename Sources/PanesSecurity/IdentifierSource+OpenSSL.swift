// Threading: called on the service thread (the hub makes identifiers there), and safe from any
// thread: OpenSSL 3's public and private DRBGs are per thread, reseeded from the primary DRBG,
// which alone takes a lock.
public import PanesCore
internal import COpenSSL

extension IdentifierSource {
    /// What the server uses: OpenSSL's DRBGs (NIST SP 800-90A CTR_DRBG with AES-256), which
    /// OpenSSL seeds and reseeds itself: a primary DRBG from the kernel's getrandom (after 256
    /// reseeds of the others or an hour), and from it one DRBG per thread (after 2^16 requests
    /// or 7 minutes, and after a fork). Identifiers come from `RAND_bytes` and secrets from
    /// `RAND_priv_bytes`, a separate DRBG whose output is never shown. Unlike `system`, most
    /// identifiers then cost no system call: a resume makes a scene token, which made two
    /// getrandom calls.
    public static let openSSL = IdentifierSource(
        random: { fill($0, RAND_bytes) },
        secret: { fill($0, RAND_priv_bytes) })

    /// Fills the buffer from the OpenSSL generator; from the kernel's (`fillFromSystem`) in the
    /// rare case that OpenSSL cannot (its seed source failed): an identifier is never made of
    /// anything but random bytes.
    private static func fill(_ buffer: UnsafeMutableRawBufferPointer,
                             _ generate: (UnsafeMutablePointer<UInt8>?, Int32) -> Int32) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        if generate(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) != 1 {
            fillFromSystem(buffer)
        }
    }
}
