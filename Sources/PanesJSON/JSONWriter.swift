// Threading: a writer is a value owned by the call that encodes; nothing is shared.
internal import CJansson
import PanesCore

#if canImport(Glibc)
import Glibc
#endif

/// Compact JSON text written straight into bytes: the same bytes jansson's `json_dump*` writes
/// with `JSONCodec`'s flags (`JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)`), without
/// building jansson's tree of the value first and receiving the text back one token per callback.
///
/// Every frame the server sends is encoded here, so this is the hot path of a reconnect storm:
/// a `connect` reply (750 bytes, 11 objects) cost about 156,000 instructions through jansson,
/// about 29,000 as a tree here, and 5,400 written from its parts (`JSONWriter+ConnectReply`,
/// issue 27). The rules are jansson's: keys sorted by their UTF-8 bytes;
/// in strings `"` and `\` escaped, `\b \f \n \r \t` for those controls, `\u00XX` (upper-case
/// hex) for the other controls below 0x20, everything else, `/` and non-ASCII included, as is.
/// Reals are left to jansson itself (`%.17g` and its touches), so they are its bytes by
/// construction; they are rare on the wire.
///
/// The text grows in memory of the writer's own (a byte array's appends cost far more per call)
/// and is copied into an array once, by `finish()`, or handed over as it is (`handOver`).
struct JSONWriter: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>
    private var count: Int
    private var capacity: Int

    /// - Parameter headroom: zero bytes written first (lws's `LWS_PRE`, see `JSONCodec.encode`).
    init(headroom: Int) {
        capacity = max(1024, headroom * 2)
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: 0, count: headroom)
        count = headroom
    }

    deinit { storage.deallocate() }

    /// The headroom and the text, as one array.
    consuming func finish() -> [UInt8] {
        [UInt8](UnsafeBufferPointer(start: storage, count: count))
    }

    /// The headroom and the text in the writer's own memory, which `adopt` takes over and must
    /// deallocate (`UnsafeMutableRawBufferPointer.deallocate()`): an outbound frame keeps it as
    /// it is, instead of the two copies (into an array, then into the frame) it cost before.
    /// When more than half of that memory is unused (a short reply in the first KiB), `adopt`
    /// gets an exact copy instead: a connection's queue of small frames (up to
    /// `maxOutboundQueue`) holds what they say, not a KiB each.
    consuming func handOver<T>(_ adopt: (UnsafeMutableRawBufferPointer) -> T) -> T {
        var bytes = UnsafeMutableRawBufferPointer(start: storage, count: count)
        if count < capacity / 2 {
            let exact = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            exact.copyMemory(from: UnsafeRawBufferPointer(bytes))
            storage.deallocate()
            bytes = UnsafeMutableRawBufferPointer(start: exact.baseAddress, count: count)
        }
        discard self
        return adopt(bytes)
    }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(toFit: extra) }
    }

    private mutating func grow(toFit extra: Int) {
        var grown = capacity * 2
        while count + extra > grown { grown *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        bigger.moveInitialize(from: storage, count: count)
        storage.deallocate()
        storage = bigger
        capacity = grown
    }

    @inline(__always)
    mutating func put(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    private mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (storage + count).initialize(from: base, count: bytes.count)
        count += bytes.count
    }

    /// Bytes made once (`ConstantParts`).
    @inline(__always)
    mutating func put(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { put($0) }
    }

    /// Inlined: a `connect` reply puts about forty of these (keys with their punctuation), and
    /// as calls they were a third of its cost.
    @inline(__always)
    mutating func put(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null:
            put("null")
        case .bool(let bool):
            put(bool ? "true" : "false")
        case .int(let int):
            write(int)
        case .double(let double):
            writeReal(double)
        case .string(let string):
            write(string)
        case .array(let items):
            put(UInt8(ascii: "["))
            var first = true
            for item in items {
                if !first { put(UInt8(ascii: ",")) }
                first = false
                write(item)
            }
            put(UInt8(ascii: "]"))
        case .object(let members):
            // `JSONObject` keeps its members in jansson's key order (bytes) already.
            put(UInt8(ascii: "{"))
            var first = true
            for (key, member) in members {
                if !first { put(UInt8(ascii: ",")) }
                first = false
                write(key)
                put(UInt8(ascii: ":"))
                write(member)
            }
            put(UInt8(ascii: "}"))
        }
    }

    /// `00`, `01`, … `99`: each number below 100 as its two digits.
    private static let digitPairs: [UInt8] = (0..<100).flatMap {
        [UInt8(ascii: "0") + UInt8($0 / 10), UInt8(ascii: "0") + UInt8($0 % 10)]
    }

    /// Decimal digits, as `%lld` writes them: counted first, then written from the last, two
    /// at a time from a table, straight into their places (a millisecond timestamp, 13 digits,
    /// up to three in a `connect` reply, takes 6 divisions and is not reversed afterwards).
    mutating func write(_ int: Int64) {
        reserve(20)
        if int < 0 { put(UInt8(ascii: "-")) }
        var magnitude = int.magnitude  // unsigned, so Int64.min has one too
        let digits = Self.decimalDigits(magnitude)
        count += digits
        var end = count
        Self.digitPairs.withUnsafeBufferPointer { pairs in
            while magnitude >= 10 {
                let pair = Int(magnitude % 100)
                magnitude /= 100
                storage[end - 1] = pairs[2 * pair + 1]
                storage[end - 2] = pairs[2 * pair]
                end -= 2
            }
        }
        // An odd count of digits leaves the leading one.
        if end > count - digits { storage[end - 1] = UInt8(ascii: "0") + UInt8(magnitude) }
    }

    /// How many decimal digits `value` has (1 for 0): estimated from its bit length (log10 2 ≈
    /// 1233 / 4096), then corrected by one comparison with the power of ten at the estimate.
    @inline(__always)
    static func decimalDigits(_ value: UInt64) -> Int {
        let estimate = ((64 - value.leadingZeroBitCount) &* 1_233) >> 12
        return Self.powersOfTen.withUnsafeBufferPointer { powers in
            max(1, estimate + (value >= powers[estimate] ? 1 : 0))
        }
    }

    /// 10⁰ … 10¹⁹, every power of ten a `UInt64` holds.
    private static let powersOfTen: [UInt64] = (0..<20).reduce(into: []) { powers, index in
        powers.append(index == 0 ? 1 : powers[index - 1] * 10)
    }

    mutating func write(_ string: String) {
        // An empty title or subtitle (most sessions' in a `connect` reply) without a look at its storage.
        if string.isEmpty { return put(#""""#) }
        if string.utf8.withContiguousStorageIfAvailable({ writeQuoted($0) }) == nil {
            Array(string.utf8).withUnsafeBufferPointer { writeQuoted($0) }  // a string not stored as UTF-8
        }
    }

    /// An identifier as a string, from its bytes (no `String` is made of a packed one).
    mutating func write(_ id: InlineIdentifier) {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        guard let count = withUnsafeMutableBytes(of: &buffer, { id.unpacked(into: $0.baseAddress!) }) else {
            return write(id.string)
        }
        withUnsafeBytes(of: &buffer) { writeQuoted(UnsafeBufferPointer(start: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)) }
    }

    /// `"text"`. Nearly every string on the wire (keys, identifiers, names) has nothing to
    /// escape: checked eight bytes at a time and copied whole, quotes included, into room
    /// reserved once; anything else goes through `writeEscaped`.
    private mutating func writeQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count + 2)
        storage[count] = UInt8(ascii: "\"")
        count += 1
        if let base = utf8.baseAddress, !Self.needsEscape(utf8) {
            (storage + count).initialize(from: base, count: utf8.count)
            count += utf8.count
        } else {
            writeEscaped(utf8)
        }
        put(UInt8(ascii: "\""))
    }

    /// Whether any byte of `utf8` must be escaped, a word at a time: a text shorter than a word
    /// (most keys and names) as one word padded with `a`s; a longer one's last bytes in the word
    /// that ends with them, which overlaps bytes already checked.
    private static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return false }
        let count = utf8.count
        if count < 8 {
            var word: UInt64 = 0x6161_6161_6161_6161
            withUnsafeMutableBytes(of: &word) { $0.copyMemory(from: UnsafeRawBufferPointer(start: base, count: count)) }
            return needsEscape(word)
        }
        var index = 0
        while index + 8 <= count {
            if needsEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) { return true }
            index += 8
        }
        return index < count && needsEscape(UnsafeRawPointer(base + count - 8).loadUnaligned(as: UInt64.self))
    }

    /// Whether any of the eight bytes in `word` must be escaped: below 0x20, `"` or `\`
    /// (the usual SWAR tests for a zero byte, on `word`, `word ^ "…"` and `word ^ "\…"`).
    private static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
        let below = (word &- ones &* 0x20) & ~word
        return ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | below) & highs != 0
    }

    private mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        var start = 0
        var index = 0
        while index < utf8.count {
            // Eight plain bytes at a time, the common case.
            if index + 8 <= utf8.count,
               !Self.needsEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) {
                index += 8
                continue
            }
            let byte = utf8[index]
            index += 1
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            put(UnsafeBufferPointer(rebasing: utf8[start..<index - 1]))
            start = index
            switch byte {
            case UInt8(ascii: "\""): put("\\\"")
            case UInt8(ascii: "\\"): put("\\\\")
            case 0x08: put("\\b")
            case 0x0C: put("\\f")
            case 0x0A: put("\\n")
            case 0x0D: put("\\r")
            case 0x09: put("\\t")
            default:
                let hex: StaticString = "0123456789ABCDEF"
                put("\\u00")
                put(hex.utf8Start[Int(byte >> 4)])
                put(hex.utf8Start[Int(byte & 0x0F)])
            }
        }
        put(UnsafeBufferPointer(rebasing: utf8[start...]))
    }

    /// jansson's own text for a real; JSON has no NaN or infinity, so those travel as null
    /// (jansson refuses to make them).
    private mutating func writeReal(_ double: Double) {
        guard let real = json_real(double) else {
            put("null")
            return
        }
        defer { pjs_release(real) }
        guard let text = json_dumps(real, pjs_flags_compact_real17()) else {
            put("null")
            return
        }
        defer { free(text) }
        text.withMemoryRebound(to: UInt8.self, capacity: 32) { pointer in
            put(UnsafeBufferPointer(start: pointer, count: strlen(text)))
        }
    }
}
