// Threading: a reader is a value owned by the call that decodes; nothing is shared.
import PanesCore

/// Reads JSON text straight into a `JSONValue`, for the text jansson accepts with the codec's
/// flags (duplicate keys refused, any value at the top, `\u0000` allowed in strings), and to
/// the same value jansson's tree converts to. It declines (returns nil) at the first thing it
/// does not settle alone: any malformed text, a key met twice (jansson compares keys by their
/// bytes, a Swift dictionary by canonical equivalence: either way the two are left to jansson
/// and the conversion that follows it), a NUL in a key, a number outside 64 bits or a double,
/// UTF-8 that does not validate. `JSONCodec.decode` then asks jansson, which decides and words
/// the error, so nothing is accepted or refused differently and every error reads as before.
///
/// Every frame a client sends is decoded, so this is the hot path of a reconnect storm: a
/// `connect` frame cost about 58,000 instructions through jansson (its tree, its hash tables,
/// then the conversion), most of it allocating and freeing (issue 27).
struct JSONReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The value of the whole text, or nil when jansson must decide (see above).
    static func read(_ text: UnsafeRawBufferPointer) -> JSONValue? {
        var reader = JSONReader(text.bindMemory(to: UInt8.self))
        guard let value = reader.value() else { return nil }
        reader.skipWhitespace()
        return reader.position == reader.bytes.count ? value : nil
    }

    private var current: UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    /// jansson's whitespace: space, tab, line feed, carriage return.
    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    private mutating func value() -> JSONValue? {
        skipWhitespace()
        guard let byte = current else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return nil
        }
    }

    private mutating func object() -> JSONValue? {
        position += 1  // {
        // Room for a request's keys from the start: growing key by key rehashes at each doubling.
        var members = [String: JSONValue](minimumCapacity: 8)
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\""), let key = string(), !key.utf8.contains(0) else { return nil }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return nil }
            position += 1
            guard let member = value(), members.updateValue(member, forKey: key) == nil else { return nil }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(members)
            default: return nil
            }
        }
    }

    private mutating func array() -> JSONValue? {
        position += 1  // [
        var items: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            guard let item = value() else { return nil }
            items.append(item)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(items)
            default: return nil
            }
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
              UnsafeBufferPointer(rebasing: bytes[position..<position + count]).elementsEqual(
                  UnsafeBufferPointer(start: word.utf8Start, count: count))
        else { return nil }
        position += count
        return value
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: an integer without fraction or
    /// exponent (which must fit 64 bits), else a real (which must be finite), as jansson lexes.
    private mutating func number() -> JSONValue? {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, isDigit(first) else { return nil }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        var isReal = false
        if current == UInt8(ascii: ".") {
            isReal = true
            position += 1
            guard let digit = current, isDigit(digit) else { return nil }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isReal = true
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard let digit = current, isDigit(digit) else { return nil }
            skipDigits()
        }
        let text = Substring(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isReal {
            guard let real = Double(text), real.isFinite else { return nil }
            return .double(real)
        }
        return Int64(text).map(JSONValue.int)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { position += 1 }
    }

    /// A string's text, its escapes resolved; at the opening quote.
    private mutating func string() -> String? {
        position += 1  // "
        let start = position
        var plain = true  // no escapes: the text is the bytes themselves
        var ascii = true
        scan: while let byte = current {
            switch byte {
            case UInt8(ascii: "\""): break scan
            case UInt8(ascii: "\\"):
                plain = false
                position += 2  // the escape's letter is checked when it is resolved
            case 0..<0x20: return nil  // a control character must be escaped
            case 0x80...:
                ascii = false
                position += 1
            default: position += 1
            }
        }
        guard position < bytes.count else { return nil }  // unterminated
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<position])
        position += 1  // "
        if plain {
            return ascii ? String(decoding: raw, as: UTF8.self) : String(validating: raw, as: UTF8.self)
        }
        return unescaped(raw, ascii: ascii)
    }

    /// The text of a string that holds escapes.
    private func unescaped(_ raw: UnsafeBufferPointer<UInt8>, ascii: Bool) -> String? {
        var text: [UInt8] = []
        text.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                text.append(byte)
                continue
            }
            guard index < raw.count else { return nil }
            let letter = raw[index]
            index += 1
            switch letter {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(letter)
            case UInt8(ascii: "b"): text.append(0x08)
            case UInt8(ascii: "f"): text.append(0x0C)
            case UInt8(ascii: "n"): text.append(0x0A)
            case UInt8(ascii: "r"): text.append(0x0D)
            case UInt8(ascii: "t"): text.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(raw, at: index) else { return nil }
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard index + 6 <= raw.count, raw[index] == UInt8(ascii: "\\"), raw[index + 1] == UInt8(ascii: "u"),
                          let low = hex4(raw, at: index + 2), (0xDC00...0xDFFF).contains(low)
                    else { return nil }
                    index += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return nil
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                text.append(contentsOf: UTF8.encode(unicode)!)
            default:
                return nil
            }
        }
        return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
    }

    private func hex4(_ raw: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt32? {
        guard index + 4 <= raw.count else { return nil }
        var value: UInt32 = 0
        for byte in raw[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
