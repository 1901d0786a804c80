/// Makes identifiers and secrets. Injected, so tests get exact, repeatable values, and so the
/// server can draw from a generator in user space (`IdentifierSource.openSSL` in PanesSecurity)
/// without this module importing C.
public struct IdentifierSource: Sendable {
    private let randomHex: @Sendable (_ bytes: Int) -> String
    private let secretHex: @Sendable (_ bytes: Int) -> String
    /// The generator behind `randomHex` when there is one (`init(random:secret:)`): `token`
    /// writes its prefix and digits into one string with it.
    private let random: (@Sendable (UnsafeMutableRawBufferPointer) -> Void)?

    public init(randomHex: @escaping @Sendable (_ bytes: Int) -> String) {
        self.randomHex = randomHex
        secretHex = randomHex
        random = nil
    }

    /// A source that fills byte buffers from a cryptographically secure generator and writes
    /// them as lower-case hex.
    /// - Parameters:
    ///   - random: fills the buffer with random bytes, for identifiers (they are shown to clients).
    ///   - secret: fills the buffer with random bytes for secrets (only their hash is kept), so
    ///     a generator may keep a separate state for what is never shown.
    public init(random: @escaping @Sendable (UnsafeMutableRawBufferPointer) -> Void,
                secret: @escaping @Sendable (UnsafeMutableRawBufferPointer) -> Void) {
        randomHex = { Self.hex(count: $0, random) }
        secretHex = { Self.hex(count: $0, secret) }
        self.random = random
    }

    /// 128 random bits for identifiers that must not collide and must not be guessed.
    public func sessionID() -> SessionID { SessionID(randomHex(16)) }
    public func secret() -> String { secretHex(16) }
    /// Shorter identifiers for things that live only in memory and are scoped to a user.
    /// Made as one string: `prefix + randomHex(12)` allocated the digits and then the joined
    /// text (a resume makes a scene's token, `scn_…`).
    public func token(_ prefix: String) -> String {
        guard let random else { return prefix + randomHex(12) }
        return Self.hex(count: 12, after: prefix, random)
    }
    /// A scene's identifier, `token("scn_")`. With a generator its 12 random bytes are packed as
    /// they are (`InlineIdentifier(prefix:random:)`): writing the digits into a heap string and
    /// packing them back cost a resume ~1,200 instructions (issue 27).
    public func sceneID() -> SceneID {
        guard let random else { return SceneID(token("scn_")) }
        return withUnsafeTemporaryAllocation(byteCount: 12, alignment: 8) { bytes in
            random(bytes)
            guard let packed = InlineIdentifier(prefix: "scn_", random: UnsafeRawBufferPointer(bytes)) else {
                preconditionFailure("`scn_` and 12 bytes are the packed form's 16")
            }
            return SceneID(bytes: packed)
        }
    }

    /// A token of `token`'s form that is itself a credential (a window's ticket travels in a URL
    /// and is redeemed for a session and its secret): drawn from the secrets' generator.
    public func bearerToken(_ prefix: String) -> String { prefix + secretHex(12) }

    /// Cryptographically secure: Swift's system generator reads the kernel's getrandom, one
    /// system call for each 64 bits (the words are asked one at a time; asking byte by byte
    /// made 44 calls for one new session). The server uses `openSSL` instead, which makes no
    /// system call for most identifiers; this is the default for a hub built elsewhere.
    public static let system = IdentifierSource(random: fillFromSystem, secret: fillFromSystem)

    /// Fills the buffer from `SystemRandomNumberGenerator`, 64 bits a call.
    @Sendable public static func fillFromSystem(_ buffer: UnsafeMutableRawBufferPointer) {
        var generator = SystemRandomNumberGenerator()
        var offset = 0
        while offset < buffer.count {
            var word = generator.next()
            let count = min(8, buffer.count - offset)
            withUnsafeBytes(of: &word) { buffer.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: count) }
            offset += count
        }
    }

    /// `prefix`, then `count` bytes from `fill` as `2 × count` lower-case hex digits.
    private static func hex(count: Int, after prefix: String = "",
                            _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> String {
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { bytes in
            fill(bytes)
            let start = prefix.utf8.count
            return String(unsafeUninitializedCapacity: start + count * 2) { text in
                _ = text.initialize(from: prefix.utf8)
                let digits: StaticString = "0123456789abcdef"
                for (index, byte) in bytes.enumerated() {
                    text[start + 2 * index] = digits.utf8Start[Int(byte >> 4)]
                    text[start + 2 * index + 1] = digits.utf8Start[Int(byte & 0xF)]
                }
                return start + count * 2
            }
        }
    }

    /// Counts up from 1: `000…001`, `000…002`, … For tests and benchmarks (SPI `Testing`).
    /// - Parameter start: where counting starts, so two test nodes never make the same id.
    @_spi(Testing) public static func sequential(from start: Int = 0) -> IdentifierSource {
        let counter = Counter(start)
        return IdentifierSource { count in
            let value = String(counter.next(), radix: 16)
            return String(repeating: "0", count: max(0, count * 2 - value.count)) + value
        }
    }
}

import Synchronization

/// A thread-safe counter so the test source is `Sendable` without `@unchecked`.
private final class Counter: Sendable {
    private let value: Mutex<Int>
    init(_ start: Int) { value = Mutex(start) }
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
