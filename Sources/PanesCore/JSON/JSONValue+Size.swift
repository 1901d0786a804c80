extension JSONValue {
    /// The length in bytes of this value's compact JSON text.
    ///
    /// Limits (userInfo size, preference value size) are stated in encoded bytes because that
    /// is what a client sends and what the store keeps; the core cannot call the encoder, so it
    /// counts the same bytes the encoder would write. Escapes are counted as written by jansson:
    /// `\n`-style for common controls, `\u00XX` for other controls, UTF-8 as is. Reals count
    /// as jansson's shortest round-tripping form at most 24 bytes.
    public var encodedSize: Int {
        switch self {
        case .null: return 4
        case .bool(let b): return b ? 4 : 5
        case .int(let i): return Self.digits(i)
        case .double: return 24
        case .string(let s): return Self.encodedSize(of: s)
        case .array(let items):
            return 2 + max(items.count - 1, 0) + items.reduce(0) { $0 + $1.encodedSize }
        case .object(let members):
            return 2 + max(members.count - 1, 0)
                + members.reduce(0) { $0 + Self.encodedSize(of: $1.key) + 1 + $1.value.encodedSize }
        }
    }

    /// A quoted string's length: its UTF-8 bytes, the two quotes, and what escapes add.
    static func encodedSize(of string: String) -> Int {
        // A preference's value is counted on every write (by the request and by the hub), so
        // the bytes are read from the string's own buffer, eight at a time, and only a word
        // that holds a byte needing an escape is looked at byte by byte.
        var string = string
        return string.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return 2 }
            let raw = UnsafeRawPointer(base)
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            var size = 2 + utf8.count
            var index = 0
            while index + 8 <= utf8.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                // The high bit of a lane is set in `control` if some byte is below 0x20, and in
                // `quote`/`backslash` if some byte is zero after the xor; never missed, though
                // a lane after the first hit can be flagged wrongly (so the word is rechecked).
                let control = (word &- ones &* 0x20) & ~word
                let quoted = word ^ (ones &* 0x22), slashed = word ^ (ones &* 0x5C)
                let quote = (quoted &- ones) & ~quoted, backslash = (slashed &- ones) & ~slashed
                if (control | quote | backslash) & highs != 0 {
                    for offset in index..<index + 8 { size += escapeBytes(utf8[offset]) }
                }
                index += 8
            }
            while index < utf8.count {
                size += escapeBytes(utf8[index])
                index += 1
            }
            return size
        }
    }

    /// What writing `byte` in a JSON string adds to its one byte: a backslash, or `\u00XX`.
    private static func escapeBytes(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x0C, 0x0A, 0x0D, 0x09: 1
        case 0..<0x20: 5
        default: 0
        }
    }

    /// The length of an integer in decimal, its sign included.
    private static func digits(_ int: Int64) -> Int {
        var magnitude = int.magnitude
        var count = int < 0 ? 2 : 1
        while magnitude >= 10 {
            magnitude /= 10
            count += 1
        }
        return count
    }
}
