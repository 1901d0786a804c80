// Threading: called on the service thread (the hub makes identifiers there), and safe from any
// thread: the pool of identifier bytes is behind a mutex, and OpenSSL 3's public and private
// DRBGs are per thread, reseeded from the primary DRBG, which alone takes a lock.
public import PanesCore
internal import COpenSSL
import Synchronization

extension IdentifierSource {
    /// What the server uses: OpenSSL's DRBGs (NIST SP 800-90A CTR_DRBG with AES-256), which
    /// OpenSSL seeds and reseeds itself: a primary DRBG from the kernel's getrandom (after 256
    /// reseeds of the others or an hour), and from it one DRBG per thread (after 2^16 requests
    /// or 7 minutes, and after a fork).
    ///
    /// Identifiers come from `RAND_bytes`, drawn 4 KiB at a time (`RandomPool`): a call costs
    /// about the same whatever its size (OpenSSL 3's provider machinery and its fork check, a
    /// getpid system call): on this machine ~0.7 µs for 12 bytes, as long as the two getrandom
    /// calls `system` makes for a resume's scene token, and ~1.2 µs for 4 KiB, 341 tokens.
    /// Secrets and bearer tokens (`secret()`, `bearerToken`: a session's secret, a window's
    /// ticket, a document link's token) come from `RAND_priv_bytes`, a separate DRBG, one call
    /// each and never pooled: they are made only for new sessions, tickets and links, and are not
    /// kept in memory ahead of their use.
    public static let openSSL: IdentifierSource = {
        let pool = RandomPool()
        return IdentifierSource(random: { pool.fill($0) }, secret: { generate($0, RAND_priv_bytes) })
    }()

    /// Fills the buffer from an OpenSSL generator; from the kernel's (`fillFromSystem`) in the
    /// rare case that OpenSSL cannot (its seed source failed): an identifier is never made of
    /// anything but random bytes.
    fileprivate static func generate(_ buffer: UnsafeMutableRawBufferPointer,
                                     _ generator: (UnsafeMutablePointer<UInt8>?, Int32) -> Int32) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        if generator(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) != 1 {
            fillFromSystem(buffer)
        }
    }
}

/// Bytes from `RAND_bytes`, fetched `size` at a time and handed out in order, each once. The
/// pool holds identifiers before they are made, so it serves only what is shown to clients
/// anyway, never secrets. A forked child would hand out the parent's next bytes again; the
/// server never forks.
final class RandomPool: Sendable {
    static let size = 4096

    private struct State: ~Copyable {
        var bytes = [UInt8](repeating: 0, count: RandomPool.size)
        /// The first byte not handed out yet; `size` when all have been.
        var next = RandomPool.size
    }

    private let state = Mutex(State())

    /// Filled as it is made, which for the server is as it starts (`openSSL`): the process's
    /// first `RAND_bytes` sets up OpenSSL's primary DRBG (seeding it, ~3.4 million instructions),
    /// which the first window to resume after a restart used to wait for.
    init() {
        state.withLock { state in
            state.bytes.withUnsafeMutableBytes { IdentifierSource.generate($0, RAND_bytes) }
            state.next = 0
        }
    }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let target = buffer.baseAddress else { return }
        state.withLock { state in
            var offset = 0
            while offset < buffer.count {
                if state.next == Self.size {
                    state.bytes.withUnsafeMutableBytes { IdentifierSource.generate($0, RAND_bytes) }
                    state.next = 0
                }
                let count = min(buffer.count - offset, Self.size - state.next)
                let next = state.next
                state.bytes.withUnsafeBytes {
                    (target + offset).copyMemory(from: $0.baseAddress! + next, byteCount: count)
                }
                state.next += count
                offset += count
            }
        }
    }
}
