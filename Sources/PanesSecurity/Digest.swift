// Threading: libcrypto (OpenSSL 3) is safe to call from any thread at once; nothing is kept
// here (`pso_sha256` hashes on a context of its own on the stack). The hub calls them on the service thread (hashing a resumed
// session's secret), the store thread calls them in a migration, and the JWT verifier on the
// service thread.
internal import COpenSSL
public import PanesCore

/// SHA-256, HMAC-SHA-256 and constant-time comparison of byte arrays (`CRYPTO_memcmp`) from
/// OpenSSL's libcrypto: no hand-written cryptography in Panes.
/// A secret's hash is compared by `SecretHash.==` (in PanesCore, four words XORed with no early
/// exit); what it compares are digests, so even a timing difference would tell an attacker
/// bytes of a SHA-256 digest, not of the secret.
public enum Digest {
    /// The SHA-256 digest of `bytes` (32 bytes).
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                pso_sha256(input.baseAddress, input.count, output.baseAddress)
            }
        }
        // Fails only if libcrypto cannot allocate; a wrong hash would be worse than stopping.
        precondition(ok == 1, "libcrypto could not compute SHA-256")
        return digest
    }

    /// The SHA-256 digest of the string's UTF-8, hashed from the string's own bytes straight
    /// into the value: a resuming window's secret is hashed here, and copies between cost as much
    /// as the hash.
    public static func secretHash(_ string: String) -> SecretHash {
        SecretHash { digest in
            let output = digest.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let ok = string.utf8.withContiguousStorageIfAvailable { input in
                pso_sha256(input.baseAddress, input.count, output)
            } ?? Array(string.utf8).withUnsafeBufferPointer { pso_sha256($0.baseAddress, $0.count, output) }
            precondition(ok == 1, "libcrypto could not compute SHA-256")
        }
    }

    /// The SHA-256 digest of the string's UTF-8, as 64 lowercase hex digits (the stored form of
    /// API keys and document links' tokens).
    public static func sha256Hex(_ string: String) -> String {
        secretHash(string).hex
    }

    /// HMAC-SHA-256 of `message` under `key` (32 bytes).
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: 32)
        let ok = key.withUnsafeBytes { key in
            message.withUnsafeBufferPointer { message in
                mac.withUnsafeMutableBufferPointer { output in
                    pso_hmac_sha256(key.baseAddress, Int32(key.count), message.baseAddress, message.count,
                                    output.baseAddress)
                }
            }
        }
        precondition(ok == 1, "libcrypto could not compute HMAC-SHA-256")
        return mac
    }

    /// Whether `a` and `b` are equal, in time that depends only on their length (which is not
    /// secret: digests and MACs have a fixed size), never on where they differ.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 }
        }
    }

    /// Lowercase hex.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
