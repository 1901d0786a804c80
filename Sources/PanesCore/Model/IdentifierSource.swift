/// Makes identifiers and secrets. Injected, so tests get exact, repeatable values.
public struct IdentifierSource: Sendable {
    private let randomHex: @Sendable (_ bytes: Int) -> String

    public init(randomHex: @escaping @Sendable (_ bytes: Int) -> String) {
        self.randomHex = randomHex
    }

    /// 128 random bits for identifiers that must not collide and must not be guessed.
    public func sessionID() -> SessionID { SessionID(randomHex(16)) }
    public func secret() -> String { randomHex(16) }
    /// Shorter identifiers for things that live only in memory and are scoped to a user.
    public func token(_ prefix: String) -> String { prefix + randomHex(12) }

    /// Cryptographically secure: Swift's system generator reads the kernel's getrandom. It is
    /// asked for 64 bits at a time: each request is a system call, and asking byte by byte made
    /// 44 of them for one new session (identifier, secret, scene).
    public static let system = IdentifierSource { count in
        var generator = SystemRandomNumberGenerator()
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(count * 2 + 14)
        while hex.count < count * 2 {
            var word = generator.next()
            for _ in 0..<8 {
                hex.append(digits[Int(word >> 4 & 0xF)])
                hex.append(digits[Int(word & 0xF)])
                word >>= 8
            }
        }
        return String(decoding: hex.prefix(count * 2), as: UTF8.self)
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
