/// The hash of a session's secret (`SecretHasher.digest`: SHA-256 in the server), held as its 32
/// bytes. Every session the server knows keeps one in its record: as 64 hex characters it was a
/// string of its own on the heap (112 bytes a session); as four words it sits inline.
///
/// Stores keep its text form, 64 lowercase hex digits (`hex`, `init(stored:)`), as they always
/// have: a hash written by an earlier build reads back as the same value, with no migration.
/// `==` compares every byte whatever their values, so it takes the same time wherever two hashes
/// differ: it is how a presented secret is checked (`SecretHasher.matches`).
public struct SecretHash: Sendable, Equatable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// The hash whose 32 bytes are `bytes`, in order (held in memory in that order); nil if there
    /// are not 32.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        self.words = words
    }

    /// The hash written by `write` into 32 bytes of memory (a digest function's output buffer).
    public init(writing write: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        try withUnsafeMutableBytes(of: &words, write)
        self.words = words
    }

    /// The hash in a store's text form: exactly 64 lowercase hex digits. Anything else (no store
    /// writes it; a damaged record might hold it) is read as `unmatchable`, as it was never matched
    /// before either: a presented secret's hash was compared with the stored text byte for byte.
    public init(stored text: String) {
        guard text.utf8.count == 64 else {
            self = .unmatchable
            return
        }
        var digits = text.utf8.makeIterator()
        var valid = true
        self.init { raw in
            for index in 0..<32 {
                guard let high = digits.next().flatMap(Self.nibble), let low = digits.next().flatMap(Self.nibble) else {
                    valid = false
                    return
                }
                raw[index] = high << 4 | low
            }
        }
        if !valid { self = .unmatchable }
    }

    /// Every bit set: a SHA-256 digest nobody can find a secret for, read from a stored form that
    /// is not a hash (`init(stored:)`). Stores do not write it back over what they hold
    /// (`storedText`); a record that holds none yet gets 64 `f`s.
    public static let unmatchable = SecretHash(bytes: [UInt8](repeating: 0xFF, count: 32))!

    /// The text a store writes for this hash: `hex`, or nil for `unmatchable`, which stands for a
    /// stored text that is not a hash (`init(stored:)`). A store keeps the text it holds for nil
    /// rather than write 64 `f`s over it, so a whole put of a damaged record changes the rest of
    /// the record and leaves its hash column as it found it (a new record gets 64 `f`s).
    public var storedText: String? {
        self == .unmatchable ? nil : hex
    }

    /// The 32 bytes, in order.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: words) { Array($0) }
    }

    /// The store's text form: 64 lowercase hex digits.
    public var hex: String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: words) { bytes in
            String(unsafeUninitializedCapacity: 64) { text in
                for (index, byte) in bytes.enumerated() {
                    text[2 * index] = digits.utf8Start[Int(byte >> 4)]
                    text[2 * index + 1] = digits.utf8Start[Int(byte & 0x0F)]
                }
                return 64
            }
        }
    }

    /// Equal when every byte is, in time that does not depend on where they differ (no early exit).
    public static func == (a: SecretHash, b: SecretHash) -> Bool {
        let difference = (a.words.0 ^ b.words.0) | (a.words.1 ^ b.words.1) | (a.words.2 ^ b.words.2)
            | (a.words.3 ^ b.words.3)
        return difference == 0
    }

    private static func nibble(_ unit: UInt8) -> UInt8? {
        switch unit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
