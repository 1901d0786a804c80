/// An identifier's UTF-8 bytes, held in two words instead of a heap string when they have the
/// form the server mints, and compared, hashed and ordered by those bytes (CONCEPTS.md,
/// invariant 10).
///
/// Why: a session id is 32 hex digits and a scene id `scn_` and 24, both longer than the 15
/// bytes Swift keeps inside a `String`, so each was a heap allocation of 80 and 64 bytes that
/// every idle scene held (issue 27). Here an identifier of 28 to 32 bytes whose first
/// `32 - length` bytes are ASCII and whose rest are lower-case hex digits (`0-9a-f`) is packed
/// into 16 bytes: the prefix bytes as they are, then the digits two to a byte. Anything else
/// (shorter, longer, upper-case, non-ASCII: whatever a client sends) is kept as its `String`.
///
/// Which form holds an identifier depends only on its bytes, so equal bytes always have the
/// same form: two packed values are equal when their words and length are, two strings when
/// their bytes are, and a packed value never equals a string. Between packed values of one
/// length, the words read big-endian order as the bytes do (`0-9` sorts before `a-f` in ASCII
/// as their values do); any other pair is compared by its bytes written out.
public struct InlineIdentifier: Hashable, Comparable, Sendable {
    @usableFromInline enum Storage: Sendable {
        /// `length` bytes (28…32): the first 16 bytes of the packed form, big-endian, in
        /// `high` then `low`.
        case packed(high: UInt64, low: UInt64, length: UInt8)
        case text(String)
    }

    @usableFromInline let storage: Storage

    /// The shortest and longest identifiers that can be packed.
    static let packedLengths: ClosedRange<Int> = 28...32

    public init(_ string: String) {
        storage = Self.pack(string.utf8) ?? .text(string)
    }

    /// The identifier of these UTF-8 bytes, as `init(_:)` makes it of their text, with no
    /// `String` made of a packed one (a resume's session id, read from its frame: `SessionID(utf8:)`).
    public init(utf8 bytes: UnsafeRawBufferPointer) {
        let packed = Self.packedLengths.contains(bytes.count) ? Self.pack(bytes) : nil
        storage = packed ?? .text(String(decoding: bytes, as: UTF8.self))
    }

    /// How many UTF-8 bytes the identifier has.
    public var utf8Count: Int {
        switch storage {
        case .packed(_, _, let length): Int(length)
        case .text(let text): text.utf8.count
        }
    }

    /// The identifier that `prefix` and then `random`'s bytes in lower-case hex spell, made from
    /// those bytes as they are: the packed form holds the prefix's bytes and then the digits two
    /// to a byte, which is `random` itself, so no text is written to be read back (a resume's scene
    /// id, `IdentifierSource.sceneID`). The same value `init(_:)` makes of that text
    /// (`InlineIdentifierTests`). Nil unless the prefix is ASCII and the two fill the 16 bytes.
    public init?(prefix: StaticString, random: UnsafeRawBufferPointer) {
        let prefixCount = prefix.utf8CodeUnitCount
        guard prefixCount + random.count == 16, let randomBase = random.baseAddress else { return nil }
        var words: (UInt64, UInt64) = (0, 0)
        let ascii = withUnsafeMutableBytes(of: &words) { packed in
            packed.baseAddress!.copyMemory(from: prefix.utf8Start, byteCount: prefixCount)
            (packed.baseAddress! + prefixCount).copyMemory(from: randomBase, byteCount: random.count)
            return packed.prefix(prefixCount).allSatisfy { $0 < 0x80 }
        }
        guard ascii else { return nil }
        storage = .packed(high: UInt64(bigEndian: words.0), low: UInt64(bigEndian: words.1),
                          length: UInt8(32 - prefixCount))
    }

    /// The identifier as text (written out anew each time for a packed one).
    public var string: String {
        switch storage {
        case .text(let text): return text
        case .packed(let high, let low, let length):
            return String(unsafeUninitializedCapacity: Int(length)) { buffer in
                Self.unpack(high: high, low: low, length: Int(length), into: UnsafeMutableRawBufferPointer(buffer))
            }
        }
    }

    /// Whether it is held in two words (for tests of the boundary).
    var isPacked: Bool {
        if case .packed = storage { return true }
        return false
    }

    /// Calls `body` with the identifier's UTF-8 bytes, without making a `String` of a packed one.
    public func withUTF8<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        if let count = withUnsafeMutableBytes(of: &buffer, { unpacked(into: $0.baseAddress!) }) {
            return try withUnsafeBytes(of: &buffer) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        let text = string
        if let result = try text.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return try Array(text.utf8).withUnsafeBytes(body)
    }

    /// Writes a packed identifier's bytes at `destination`, which has room for 32, and returns
    /// how many; nil (nothing written) for one held as a `String` (`string`). Not generic, so
    /// callers in other modules pay no generic call (a resume writes two identifiers this way).
    public func unpacked(into destination: UnsafeMutableRawPointer) -> Int? {
        guard case .packed(let high, let low, let length) = storage else { return nil }
        return Self.unpack(high: high, low: low, length: Int(length),
                           into: UnsafeMutableRawBufferPointer(start: destination, count: Int(length)))
    }

    @inlinable public static func == (a: Self, b: Self) -> Bool {
        switch (a.storage, b.storage) {
        case (.packed(let ah, let al, let an), .packed(let bh, let bl, let bn)): return ah == bh && al == bl && an == bn
        case (.text(let x), .text(let y)): return Identifier.equal(x, y)
        default: return false
        }
    }

    @inlinable public func hash(into hasher: inout Hasher) {
        switch storage {
        case .packed(let high, let low, let length):
            // Two words, not three: the length folded into the low word makes equal hashes of at
            // most five different identifiers (one per length), never of many.
            hasher.combine(high)
            hasher.combine(low &+ UInt64(length))
        case .text(let text):
            Identifier.hash(text, into: &hasher)
        }
    }

    /// By bytes: see the type's note.
    public static func < (a: Self, b: Self) -> Bool {
        if case .packed(let ah, let al, let an) = a.storage, case .packed(let bh, let bl, let bn) = b.storage, an == bn {
            return ah != bh ? ah < bh : al < bl
        }
        return a.withUTF8 { x in b.withUTF8 { y in x.lexicographicallyPrecedes(y) } }
    }

    /// The packed form of `utf8`, or nil when it has none.
    private static func pack(_ utf8: String.UTF8View) -> Storage? {
        guard packedLengths.contains(utf8.count) else { return nil }
        let packed = utf8.withContiguousStorageIfAvailable { pack(UnsafeRawBufferPointer($0)) }
        return packed ?? Array(utf8).withUnsafeBytes { pack($0) }
    }

    private static func pack(_ bytes: UnsafeRawBufferPointer) -> Storage? {
        let length = bytes.count
        let prefix = 32 - length
        let utf8 = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        // Shifted in at the low end, a byte of the prefix or a digit at a time; `invalid`
        // collects a prefix byte's high bit and any digit's 0xFF.
        var high: UInt64 = 0, low: UInt64 = 0
        var invalid: UInt8 = 0
        var index = 0
        while index < prefix {
            let byte = utf8[index]
            invalid |= byte & 0x80
            high = high &<< 8 | low &>> 56
            low = low &<< 8 | UInt64(byte)
            index += 1
        }
        // Eight digits at a time (a digit at a time took ~650 instructions an identifier), then
        // the two, four or six left.
        while index + 8 <= length {
            guard let value = digits(UnsafeRawPointer(utf8 + index).loadUnaligned(as: UInt64.self).littleEndian) else {
                return nil
            }
            high = high &<< 32 | low &>> 32
            low = low &<< 32 | UInt64(value)
            index += 8
        }
        while index < length {
            let digit = nibble(utf8[index])
            invalid |= digit & 0xF0
            high = high &<< 4 | low &>> 60
            low = low &<< 4 | UInt64(digit & 0xF)
            index += 1
        }
        guard invalid == 0 else { return nil }
        return .packed(high: high, low: low, length: UInt8(length))
    }

    /// The value of eight lower-case hex digits, the first in the word's low byte; nil when
    /// any byte is not one.
    @inline(__always)
    private static func digits(_ word: UInt64) -> UInt32? {
        let ones: UInt64 = 0x0101_0101_0101_0101, high = 0x80 * ones
        guard word & high == 0 else { return nil }
        // Bytes below 0x80 plus a constant set their high bit exactly when they reach a bound
        // (no carry leaves a byte).
        let isDigit = (word &+ 0x50 * ones) & ~(word &+ 0x46 * ones) & high  // 0x30…0x39
        let isLetter = (word &+ 0x1F * ones) & ~(word &+ 0x19 * ones) & high  // 0x61…0x66
        guard isDigit | isLetter == high else { return nil }
        // A digit's value is its low four bits; a letter's, nine more.
        let nibbles = (word & (0x0F &* ones)) &+ (isLetter >> 7) &* 9
        // Byte 2j of the pairs: digit 2j in the high half, digit 2j + 1 in the low.
        let pairs = (nibbles &<< 4 | nibbles >> 8) & 0x00FF_00FF_00FF_00FF
        return UInt32(truncatingIfNeeded: pairs) << 24 | UInt32(truncatingIfNeeded: pairs >> 16 & 0xFF) << 16
            | UInt32(truncatingIfNeeded: pairs >> 32 & 0xFF) << 8 | UInt32(truncatingIfNeeded: pairs >> 48 & 0xFF)
    }

    /// A lower-case hex digit's value; 0xFF for any other byte.
    @inline(__always)
    private static func nibble(_ byte: UInt8) -> UInt8 {
        let digit = byte &- UInt8(ascii: "0"), letter = byte &- UInt8(ascii: "a")
        return digit < 10 ? digit : letter < 6 ? letter &+ 10 : 0xFF
    }

    /// Writes the `length` bytes of a packed identifier at the start of `buffer`; returns
    /// `length`. Every byte is written as two hex digits, eight bytes at a time, and the prefix's
    /// bytes then put in front of the digits that follow them (a loop per byte and digit took
    /// about 650 instructions, and a resume writes three identifiers out).
    @discardableResult
    private static func unpack(high: UInt64, low: UInt64, length: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let prefix = 32 - length
        let base = buffer.baseAddress!
        // The digits of the bytes after the prefix, at `prefix`…, from the digits of all 16.
        var digits = (hex(UInt32(truncatingIfNeeded: high >> 32)), hex(UInt32(truncatingIfNeeded: high)),
                      hex(UInt32(truncatingIfNeeded: low >> 32)), hex(UInt32(truncatingIfNeeded: low)))
        withUnsafeBytes(of: &digits) { all in
            base.advanced(by: prefix).copyMemory(from: all.baseAddress!.advanced(by: 2 * prefix), byteCount: 32 - 2 * prefix)
        }
        var bytes = high.bigEndian
        withUnsafeBytes(of: &bytes) { base.copyMemory(from: $0.baseAddress!, byteCount: prefix) }
        return length
    }

    /// The eight lower-case hex digits of `word`, most significant first, as the bytes of a
    /// little-endian word.
    @inline(__always)
    private static func hex(_ word: UInt32) -> UInt64 {
        // Byte i of the spread: the i-th nibble from the top (each byte's high nibble first).
        let bytes = UInt64(word >> 24) | UInt64(word >> 16 & 0xFF) << 16 | UInt64(word >> 8 & 0xFF) << 32 | UInt64(word & 0xFF) << 48
        let nibbles = (bytes >> 4 & 0x000F_000F_000F_000F) | (bytes & 0x000F_000F_000F_000F) << 8
        // 10…15 get `a` - `0` - 10 more than `0` + the nibble.
        let letters = (nibbles &+ 0x7676_7676_7676_7676) >> 7 & 0x0101_0101_0101_0101
        return (nibbles &+ 0x3030_3030_3030_3030 &+ letters &* 39).littleEndian
    }
}
