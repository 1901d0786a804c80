/// What a keyed request asked, as a short string: its type and a hash of its fields, so a key
/// sent again with a different request is told apart from a retry (`idempotency_key_reused`).
///
/// The fields are serialised canonically (object keys in byte order, every value tagged with
/// its type and length) and hashed with 64-bit FNV-1a. Not a cryptographic hash: a key belongs
/// to one user, who can only confuse themself, and an accidental collision of two different
/// requests under the same key is one in 2^64.
public enum RequestFingerprint {
    public static func of(type: String, fields: JSONObject) -> String {
        var hasher = FNV1a()
        hasher.add(Array(type.utf8))
        hasher.add(0)
        var length = 0
        serialise(.object(fields), into: &hasher, length: &length)
        return "\(type):\(length):\(hex(hasher.value))"
    }

    private static func serialise(_ value: JSONValue, into hasher: inout FNV1a, length: inout Int) {
        func add(_ tag: UInt8, _ bytes: [UInt8]) {
            hasher.add(tag)
            let count = String(bytes.count).utf8
            for byte in count { hasher.add(byte) }
            hasher.add(UInt8(ascii: ":"))
            hasher.add(bytes)
            length += 2 + count.count + bytes.count
        }
        switch value {
        case .null: add(UInt8(ascii: "n"), [])
        case .bool(let bool): add(UInt8(ascii: "b"), [bool ? 1 : 0])
        case .int(let int): add(UInt8(ascii: "i"), Array(String(int).utf8))
        case .double(let double):
            // A whole real is the integer a client meant (`3.0` from one client, `3` from another).
            if let int = value.intValue { add(UInt8(ascii: "i"), Array(String(int).utf8)) } else {
                add(UInt8(ascii: "d"), Array(String(double.bitPattern).utf8))
            }
        case .string(let string): add(UInt8(ascii: "s"), Array(string.utf8))
        case .array(let items):
            add(UInt8(ascii: "a"), Array(String(items.count).utf8))
            for item in items { serialise(item, into: &hasher, length: &length) }
        case .object(let members):
            add(UInt8(ascii: "o"), Array(String(members.count).utf8))
            for (key, member) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                add(UInt8(ascii: "k"), Array(key.utf8))
                serialise(member, into: &hasher, length: &length)
            }
        }
    }

    private static func hex(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    private struct FNV1a {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func add(_ byte: UInt8) {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }

        mutating func add(_ bytes: [UInt8]) {
            for byte in bytes { add(byte) }
        }
    }
}
