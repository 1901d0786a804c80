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
        case .int(let i): return String(i).utf8.count
        case .double: return 24
        case .string(let s): return Self.encodedSize(of: s)
        case .array(let items):
            return 2 + max(items.count - 1, 0) + items.reduce(0) { $0 + $1.encodedSize }
        case .object(let members):
            return 2 + max(members.count - 1, 0)
                + members.reduce(0) { $0 + Self.encodedSize(of: $1.key) + 1 + $1.value.encodedSize }
        }
    }

    static func encodedSize(of string: String) -> Int {
        var size = 2
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x0C, 0x0A, 0x0D, 0x09: size += 2
            case 0..<0x20: size += 6
            default: size += 1
            }
        }
        return size
    }
}
