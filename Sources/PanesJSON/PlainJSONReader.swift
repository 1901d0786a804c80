public import PanesCore

/// Reads the plain JSON most frames are — ASCII strings without escapes, integers of up to 18
/// digits, `true`, `false`, `null`, arrays and objects without a repeated key, nested at most
/// `maxDepth` deep — into a `JSONValue`, several times faster than jansson (a `connect` frame:
/// jansson and the conversion took about 45,000 instructions of a resume's 200,000).
///
/// Anything else gives nil, never an error: then jansson reads the text as before
/// (`JSONCodec.decode`), so every refusal, its words and its position, and every value outside
/// this subset are still jansson's. Within the subset the value is the one jansson gives:
/// JSON's grammar (RFC 8259) is followed exactly, and what could differ is left to jansson
/// (escapes, non-ASCII text, reals, integers that could overflow, `-0`, a repeated key).
/// `PlainJSONReaderTests` compares the two on generated, captured and mutated texts.
public struct PlainJSONReader {
    private let base: UnsafePointer<UInt8>
    private let end: Int
    private var index = 0
    /// Deeper nesting is left to jansson (and to `JSONCodec`'s depth limit).
    static let maxDepth = 32

    private init(_ base: UnsafePointer<UInt8>, _ count: Int) {
        self.base = base
        end = count
    }

    /// The value of `bytes`, or nil when they are not plain JSON as above.
    public static func read(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
        var reader = PlainJSONReader(base.assumingMemoryBound(to: UInt8.self), bytes.count)
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.index == reader.end ? value : nil
    }

    private mutating func skipSpace() {
        while index < end {
            switch base[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) -> JSONValue? {
        skipSpace()
        guard index < end else { return nil }
        switch base[index] {
        case UInt8(ascii: "{"): return depth < Self.maxDepth ? object(depth: depth + 1) : nil
        case UInt8(ascii: "["): return depth < Self.maxDepth ? array(depth: depth + 1) : nil
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
        default: return nil
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard end - index >= count else { return nil }
        for offset in 0..<count where base[index + offset] != word.utf8Start[offset] { return nil }
        index += count
        // A letter or digit right after (`truex`) is not JSON; left to jansson.
        if index < end, Self.isWordByte(base[index]) { return nil }
        return value
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// `-?(0|[1-9][0-9]*)` with at most 18 digits, so it always fits 64 bits; not `-0`.
    private mutating func integer() -> JSONValue? {
        var negative = false
        if base[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var magnitude: Int64 = 0
        while index < end, base[index] >= UInt8(ascii: "0"), base[index] <= UInt8(ascii: "9") {
            // A 19th digit could overflow: checked before it is added.
            if index - start == 18 { return nil }
            magnitude = magnitude * 10 + Int64(base[index] - UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - start
        guard digits > 0 else { return nil }
        // A leading zero (`01`), `-0`, a fraction or an exponent: jansson's.
        if base[start] == UInt8(ascii: "0"), digits > 1 || negative { return nil }
        if index < end, Self.isWordByte(base[index]) { return nil }
        return .int(negative ? -magnitude : magnitude)
    }

    /// `"` printable ASCII without `\` `"`; the index is on the opening quote.
    private mutating func string() -> String? {
        index += 1
        let start = index
        while index < end {
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
                index += 1
                return text
            }
            // An escape, a control character (not JSON), a byte of a multi-byte character.
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x7F { return nil }
            index += 1
        }
        return nil
    }

    private mutating func array(depth: Int) -> JSONValue? {
        index += 1
        var elements: [JSONValue] = []
        skipSpace()
        if index < end, base[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            guard let element = value(depth: depth) else { return nil }
            elements.append(element)
            skipSpace()
            guard index < end else { return nil }
            let byte = base[index]
            index += 1
            if byte == UInt8(ascii: "]") { return .array(elements) }
            if byte != UInt8(ascii: ",") { return nil }
        }
    }

    private mutating func object(depth: Int) -> JSONValue? {
        index += 1
        var members: [(String, JSONValue)] = []
        skipSpace()
        if index < end, base[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        while true {
            skipSpace()
            guard index < end, base[index] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard index < end, base[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let member = value(depth: depth) else { return nil }
            members.append((key, member))
            skipSpace()
            guard index < end else { return nil }
            let byte = base[index]
            index += 1
            if byte == UInt8(ascii: "}") { break }
            if byte != UInt8(ascii: ",") { return nil }
        }
        // ASCII keys are equal exactly when their bytes are: a repeated one is jansson's to refuse.
        var repeated = false
        let object = [String: JSONValue](members, uniquingKeysWith: { first, _ in
            repeated = true
            return first
        })
        return repeated ? nil : .object(object)
    }
}
