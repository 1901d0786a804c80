import PanesCore

/// A reader for the plain JSON texts that make up nearly every frame, which builds the
/// `JSONValue` straight from the bytes; anything else is left to jansson, the parser of record.
///
/// jansson reads a byte at a time through a callback and saves each byte of a token into a
/// buffer (`stream_get`, `lex_save`): about 145 instructions a byte, 36,000 for a resume's
/// ~250-byte `connect` frame (bench/README.md, "Decoding a frame without jansson's lexer").
/// This reader takes only texts whose value jansson would give exactly, and answers nil for
/// any other, which `JSONCodec.decode` then hands to jansson, so every refusal, and every
/// error's words, are still jansson's. It accepts:
/// - objects and arrays nested at most `maxDepth` deep, whose keys are ASCII without escapes,
///   no two the same (an object with a repeated key is left to jansson, which refuses it);
/// - strings of ASCII bytes 0x20–0x7F (DEL included, which jansson takes too) without `"` or
///   `\` (no escapes, no control bytes, no UTF-8 beyond ASCII: jansson's UTF-8 checks are not
///   repeated here);
/// - integers `-?(0|[1-9][0-9]*)` of at most 18 digits not followed by `.`, `e` or `E`
///   (no real, and nothing near `Int64`'s limits);
/// - `true`, `false`, `null`;
/// - jansson's whitespace (space, tab, line feed, carriage return) between tokens and around
///   the value, nothing after it.
///
/// In that language jansson's value is the one built here: the same members in the same
/// order (`JSONObject.Builder`, as `JSONCodec` builds from jansson's), the same string bytes,
/// the same integers. `JSONFastReaderTests` compares the two on mutations of real frames.
enum JSONFastReader {
    /// The deepest nesting read here; deeper texts go to jansson (after `JSONCodec.decode`'s
    /// depth limit, which comes first).
    static let maxDepth = 8

    /// At most 18 digits: below `Int64.max` (19 digits) whatever they are.
    static let maxDigits = 18

    /// The value of `bytes`, or nil if this reader does not take the text.
    static func read(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else { return nil }
        var cursor = Cursor(base: base, end: bytes.count)
        guard let value = cursor.value(depth: 0) else { return nil }
        cursor.skipSpace()
        return cursor.index == cursor.end ? value : nil
    }

    /// Internal: `ConnectFrameReader` reads with it too.
    struct Cursor {
        let base: UnsafePointer<UInt8>
        let end: Int
        var index = 0

        init(base: UnsafePointer<UInt8>, end: Int) {
            self.base = base
            self.end = end
        }

        /// The byte at `index`, or 0 past the end (0 is taken nowhere, so it ends every rule).
        @inline(__always) var byte: UInt8 { index < end ? base[index] : 0 }

        /// jansson's whitespace: `' '`, `'\t'`, `'\n'`, `'\r'` (load.c, `lex_scan`).
        @inline(__always) mutating func skipSpace() {
            while index < end {
                let byte = base[index]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
                index += 1
            }
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipSpace()
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = string() else { return nil }
                return .string(String(decoding: text, as: UTF8.self))
            case UInt8(ascii: "{"):
                return depth < JSONFastReader.maxDepth ? object(depth: depth + 1) : nil
            case UInt8(ascii: "["):
                return depth < JSONFastReader.maxDepth ? array(depth: depth + 1) : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return integer()
            case UInt8(ascii: "t"):
                return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"):
                return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"):
                return literal("null") ? .null : nil
            default:
                return nil
            }
        }

        /// A string's bytes between its quotes (the cursor on the opening one), if all are
        /// ASCII 0x20–0x7F other than `"` and `\`.
        mutating func string() -> UnsafeRawBufferPointer? {
            index += 1
            let start = index
            // Eight bytes at a time (nearly every byte of an identifier, a secret or a name is
            // plain); in the first word that is not, its first byte that is not is found from
            // the word's marks at once (the lowest mark is exact, see `marks`): the closing
            // quote ends the string, any other byte gives the text to jansson.
            while index + 8 <= end {
                // Little-endian: the lowest mark is the word's first byte on any host.
                let marks = Self.marks(UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)))
                guard marks == 0 else {
                    index += marks.trailingZeroBitCount >> 3
                    guard base[index] == UInt8(ascii: "\"") else { return nil }
                    index += 1
                    return UnsafeRawBufferPointer(start: base + start, count: index - 1 - start)
                }
                index += 8
            }
            // The last bytes of the text (fewer than a word), one at a time.
            while index < end {
                let byte = base[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return UnsafeRawBufferPointer(start: base + start, count: index - 1 - start)
                }
                // Control bytes (jansson refuses them), a backslash (an escape) and anything
                // beyond ASCII (UTF-8 that jansson checks) go to jansson.
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }

        /// Whether all eight bytes of `word` are ones `string()` passes over: ASCII 0x20–0x7F
        /// other than `"` and `\` (the usual SWAR tests, each exact as a whole: a byte with its
        /// high bit set; a byte below 0x20, in a word without those; a zero byte in `word ^ "…"`
        /// and in `word ^ "\…"`).
        @inline(__always) static func plain(_ word: UInt64) -> Bool { marks(word) == 0 }

        /// The high bit of each byte of `word` (little-endian: the first byte lowest) that
        /// `string()` does not pass over, and possibly of some bytes after the first such: a
        /// subtraction's borrow runs only upward, out of a byte that is itself marked, so the
        /// lowest mark is always the first byte that is not plain, and none is set when all are.
        @inline(__always) static func marks(_ word: UInt64) -> UInt64 {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
            let below = (word &- ones &* 0x20) & ~word
            return (word | (quote &- ones) & ~quote | (backslash &- ones) & ~backslash | below) & highs
        }

        /// The cursor on `{`.
        mutating func object(depth: Int) -> JSONValue? {
            var builder = JSONObject.Builder(capacity: 8)
            let read = members { key, cursor in
                guard let member = cursor.value(depth: depth) else { return false }
                builder.append(keyBytes: key, member)
                return true
            }
            guard read, let object = builder.objectUnlessDuplicated() else { return nil }
            return .object(object)
        }

        /// An object's members (the cursor on its `{`, or on whitespace before it), each handed
        /// to `body` with the cursor on its value; false when the text is not an object in the
        /// grammar or `body` gives up. `object(depth:)` builds a tree from them;
        /// `ConnectFrameReader` reads a `connect`'s fields.
        mutating func members(_ body: (UnsafeRawBufferPointer, inout Self) -> Bool) -> Bool {
            skipSpace()
            guard byte == UInt8(ascii: "{") else { return false }
            index += 1
            skipSpace()
            if byte == UInt8(ascii: "}") {
                index += 1
                return true
            }
            while true {
                guard byte == UInt8(ascii: "\""), let key = string() else { return false }
                skipSpace()
                guard byte == UInt8(ascii: ":") else { return false }
                index += 1
                skipSpace()
                guard body(key, &self) else { return false }
                skipSpace()
                switch byte {
                case UInt8(ascii: ","):
                    index += 1
                    skipSpace()
                case UInt8(ascii: "}"):
                    index += 1
                    return true
                default:
                    return false
                }
            }
        }

        /// The cursor on `[`.
        mutating func array(depth: Int) -> JSONValue? {
            index += 1
            skipSpace()
            var items: [JSONValue] = []
            if byte == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                guard let item = value(depth: depth) else { return nil }
                items.append(item)
                skipSpace()
                switch byte {
                case UInt8(ascii: ","):
                    index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(items)
                default:
                    return nil
                }
            }
        }

        /// `-?(0|[1-9][0-9]*)` of at most `maxDigits` digits, not followed by a fraction or an
        /// exponent (a real) nor by another digit (`01`, which jansson refuses).
        mutating func integer() -> JSONValue? {
            let negative = byte == UInt8(ascii: "-")
            if negative { index += 1 }
            let start = index
            var magnitude: Int64 = 0
            while index < end {
                let digit = base[index] &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                magnitude = magnitude &* 10 &+ Int64(digit)
                index += 1
            }
            let digits = index - start
            guard digits > 0, digits <= JSONFastReader.maxDigits,
                  digits == 1 || base[start] != UInt8(ascii: "0") else { return nil }
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: return .int(negative ? -magnitude : magnitude)
            }
        }

        /// Whether `word` is next (the cursor on its first letter); a letter after it is left
        /// to the grammar, which takes none there.
        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard end - index >= count else { return false }
            for offset in 0..<count where base[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }
    }
}
