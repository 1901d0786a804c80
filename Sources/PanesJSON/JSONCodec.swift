// Threading: jansson values are built and freed inside each call, never shared, so these
// functions are safe on any thread. jansson itself is thread-safe for separate values.
internal import CJansson
internal import CJanssonArena
public import PanesCore

/// JSON text to `JSONValue` and back, through jansson. The only Swift module that imports it
/// (`CJanssonArena`, in C, gives jansson its allocator while a frame is decoded).
public enum JSONCodec {
    /// Why a frame is not JSON, with jansson's position for the client's benefit.
    public struct DecodeError: Error, Sendable, CustomStringConvertible {
        public enum Kind: Sendable, Equatable {
            /// Not JSON text.
            case malformed
            /// Nested deeper than allowed.
            case tooDeep
            /// A number JSON can write but this server cannot hold exactly (an integer outside
            /// 64 bits, a real beyond a double).
            case numberOutOfRange
        }

        public let kind: Kind
        public let description: String

        init(_ kind: Kind = .malformed, description: String) {
            self.kind = kind
            self.description = description
        }
    }

    /// Parses one JSON text with jansson. Duplicate keys are refused: which one wins is not defined. So are
    /// keys that differ in their bytes but are canonically equivalent Unicode (NFC `é` and NFD
    /// `e` + U+0301): jansson keeps both, but they are the same text to a reader, any
    /// `String`-keyed table made of them would let one silently replace the other (a token's
    /// `panes.workspaces` granting two workspaces would grant one), and no `JSONObject` the
    /// server builds holds two (`JSONObject+Equivalence.swift`). Only objects with a non-ASCII
    /// key are checked for it.
    /// - Parameter maxDepth: arrays and objects nested deeper than this are refused before
    ///   parsing (`.tooDeep`), so a hostile frame cannot make the parser recurse for ever.
    /// - Parameter acceptingEquivalentKeys: keeps canonically equivalent keys as the two keys
    ///   they are (a `JSONObject` compares keys by bytes), for text the server wrote itself
    ///   that may hold them (a store's old `AppliedStreams` object, keyed by op-id stream).
    public static func decode(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = 512,
                              acceptingEquivalentKeys: Bool = false) -> Result<JSONValue, DecodeError> {
        if openingBrackets(bytes) > maxDepth, let depth = depthOverLimit(bytes, maxDepth) {
            return .failure(DecodeError(.tooDeep, description: "arrays and objects are nested \(depth) deep at least, over the limit of \(maxDepth)"))
        }
        // Plain texts (every frame panes-load sends, and most a browser does) are read without
        // jansson's lexer; the reader answers nil for anything it cannot vouch jansson reads
        // the same, and jansson decides (`JSONFastReader`). Its keys are ASCII, so no two can
        // be canonically equivalent.
        if let value = JSONFastReader.read(bytes) { return .success(value) }
        return janssonDecode(bytes, acceptingEquivalentKeys: acceptingEquivalentKeys)
    }

    /// jansson's verdict on a text, and its value.
    static func janssonDecode(_ bytes: UnsafeRawBufferPointer, acceptingEquivalentKeys: Bool = false) -> Result<JSONValue, DecodeError> {
        // jansson's blocks for a frame come from this thread's buffer (`pjs_arena_begin`, 4 KiB:
        // a `connect` frame's take about 2); a value parsed is released before it ends, unless
        // the arena held all of it (`parse`).
        _ = arenaInstalled
        pjs_arena_begin()
        defer { pjs_arena_end() }
        return parse(bytes, acceptingEquivalentKeys: acceptingEquivalentKeys)
    }

    private static let arenaInstalled: Void = pjs_arena_install()

    private static func parse(_ bytes: UnsafeRawBufferPointer, acceptingEquivalentKeys: Bool) -> Result<JSONValue, DecodeError> {
        var error = json_error_t()
        guard let base = bytes.baseAddress,
              let root = json_loadb(base.assumingMemoryBound(to: CChar.self), bytes.count,
                                    Int(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL), &error)
        else {
            if bytes.isEmpty { return .failure(DecodeError(description: "the frame is empty")) }
            let text = withUnsafeBytes(of: &error.text) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            // jansson's own words for numbers it cannot hold (load.c): "too big integer",
            // "too big negative integer", "real number overflow".
            let outOfRange = text.hasPrefix("too big") || text.hasPrefix("real number overflow")
            return .failure(DecodeError(outOfRange ? .numberOutOfRange : .malformed,
                                        description: "\(text) at line \(error.line), column \(error.column)"))
        }
        // A document wholly in the arena needs no release: it is gone when the arena starts over.
        defer { if pjs_arena_held_all() == 0 { pjs_release(root) } }
        var clash: String?
        let value = value(of: root, clash: &clash)
        if let clash, !acceptingEquivalentKeys {
            return .failure(DecodeError(description: "an object has two keys that are the same Unicode text in different "
                                            + "bytes (canonically equivalent), `\(clash.prefix(64))`; send one of them"))
        }
        return .success(value)
    }

    /// How many bytes are `[` or `{`, strings included, counted eight at a time: each level of
    /// nesting takes one, so a text with no more than the limit cannot pass it, and only
    /// others are scanned for their depth (`depthOverLimit`).
    private static func openingBrackets(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        // `[` (5B) and `{` (7B) differ only in the bit 0x20, which no other byte sets to make 7B.
        let spaces: UInt64 = 0x2020_2020_2020_2020, braces: UInt64 = 0x7B7B_7B7B_7B7B_7B7B
        let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        var count = 0
        var index = 0
        // One counter a byte lane, emptied into `count` before any can pass 255.
        var lanes: UInt64 = 0
        var words = 0
        while index + 8 <= bytes.count {
            let difference = (base.loadUnaligned(fromByteOffset: index, as: UInt64.self) | spaces) ^ braces
            // 1 in each lane whose byte is zero, exactly (no carry crosses a byte).
            lanes &+= (~(((difference & low) &+ low) | difference) & ~low) >> 7
            index += 8
            words += 1
            if words == 255 {
                count += Self.sum(lanes)
                lanes = 0
                words = 0
            }
        }
        count += Self.sum(lanes)
        while index < bytes.count {
            if base.load(fromByteOffset: index, as: UInt8.self) | 0x20 == 0x7B { count += 1 }
            index += 1
        }
        return count
    }

    /// The eight byte lanes of `lanes` added up.
    private static func sum(_ lanes: UInt64) -> Int {
        let pairs = (lanes & 0x00FF_00FF_00FF_00FF) &+ ((lanes >> 8) & 0x00FF_00FF_00FF_00FF)
        return Int((pairs &* 0x0001_0001_0001_0001) >> 48)
    }

    /// The depth reached, if it passes `limit`: brackets outside strings, counted in one pass.
    private static func depthOverLimit(_ bytes: UnsafeRawBufferPointer, _ limit: Int) -> Int? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let end = bytes.count
        var index = 0
        var depth = 0
        while index < end {
            let byte = base[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                while index < end {
                    let inner = base[index]
                    index += 1
                    if inner == UInt8(ascii: "\"") { break }
                    if inner == UInt8(ascii: "\\") { index += 1 }
                }
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return depth }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return nil
    }

    public static func decode(_ bytes: [UInt8]) -> Result<JSONValue, DecodeError> {
        bytes.withUnsafeBytes { decode($0) }
    }

    public static func decode(_ string: String, acceptingEquivalentKeys: Bool = false) -> Result<JSONValue, DecodeError> {
        var string = string
        return string.withUTF8 { decode(UnsafeRawBufferPointer($0), acceptingEquivalentKeys: acceptingEquivalentKeys) }
    }

    /// Encodes compactly (`JSONWriter`), or indented for files people read (through jansson).
    /// `headroom` zero bytes come first: lws needs `LWS_PRE` bytes in front of every payload,
    /// and writing them here saves a copy of every outbound frame.
    public static func encode(_ value: JSONValue, headroom: Int = 0, pretty: Bool = false) -> [UInt8] {
        guard pretty else {
            var writer = JSONWriter(headroom: headroom)
            writer.write(value)
            return writer.finish()
        }
        let json = make(value)
        defer { pjs_release(json) }
        var sink = Sink(bytes: [UInt8](repeating: 0, count: headroom))
        withUnsafeMutablePointer(to: &sink) { pointer in
            _ = json_dump_callback(json, { buffer, size, context in
                guard let buffer, let context else { return -1 }
                let sink = context.assumingMemoryBound(to: Sink.self)
                buffer.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
                    sink.pointee.bytes.append(contentsOf: UnsafeBufferPointer(start: bytes, count: size))
                }
                return 0
            }, pointer, pjs_flags_pretty())
        }
        return sink.bytes
    }

    /// A message as its frame's bytes, after `headroom` zero bytes: `encode(message.json, …)`,
    /// except that a `connect` reply is written from its parts, without building its tree.
    public static func encode(_ message: ServerMessage, headroom: Int = 0) -> [UInt8] {
        var writer = JSONWriter(headroom: headroom)
        writer.write(message)
        return writer.finish()
    }

    /// `encode(message, headroom:)`'s bytes in memory handed to `adopt`, which owns it from then
    /// on and deallocates it (`UnsafeMutableRawBufferPointer.deallocate()`): an outbound frame
    /// takes the text as written, with no copy.
    public static func encode<T>(_ message: ServerMessage, headroom: Int,
                                 handingOverTo adopt: (UnsafeMutableRawBufferPointer) -> T) -> T {
        var writer = JSONWriter(headroom: headroom)
        writer.write(message)
        return writer.handOver(adopt)
    }

    public static func encodeString(_ value: JSONValue, pretty: Bool = false) -> String {
        String(decoding: encode(value, pretty: pretty), as: UTF8.self)
    }

    private struct Sink {
        var bytes: [UInt8]
    }

    /// - Parameter clash: set to a key whose object already held a canonically equivalent one.
    private static func value(of json: UnsafeMutablePointer<json_t>, clash: inout String?) -> JSONValue {
        switch pjs_typeof(json) {
        case JSON_OBJECT:
            // Members in jansson's order (the client's), sorted once by `object()`. Keys are
            // compared by bytes from then on; only an object with a non-ASCII key can hold two
            // canonically equivalent ones, so only those are checked for it.
            var builder = JSONObject.Builder(capacity: json_object_size(json))
            var bits: UInt8 = 0
            var iterator = json_object_iter(json)
            while let current = iterator {
                // jansson knows the key's length (and refuses keys with a NUL in them).
                let key = UnsafeRawBufferPointer(start: json_object_iter_key(current), count: json_object_iter_key_len(current))
                for byte in key { bits |= byte }
                builder.append(keyBytes: key, value(of: json_object_iter_value(current), clash: &clash))
                iterator = json_object_iter_next(json, current)
            }
            if bits & 0x80 != 0, clash == nil { clash = firstEquivalentKey(of: json) }
            return .object(builder.object())
        case JSON_ARRAY:
            let count = json_array_size(json)
            var array: [JSONValue] = []
            array.reserveCapacity(count)
            for index in 0..<count { array.append(value(of: json_array_get(json, index), clash: &clash)) }
            return .array(array)
        case JSON_STRING:
            let buffer = UnsafeRawBufferPointer(start: json_string_value(json), count: json_string_length(json))
            return .string(String(decoding: buffer, as: UTF8.self))
        case JSON_INTEGER:
            return .int(Int64(json_integer_value(json)))
        case JSON_REAL:
            return .double(json_real_value(json))
        case JSON_TRUE:
            return .bool(true)
        case JSON_FALSE:
            return .bool(false)
        default:
            return .null
        }
    }

    /// The first key of an object that is canonically equivalent to an earlier one (jansson
    /// refused keys with the same bytes already).
    private static func firstEquivalentKey(of object: UnsafeMutablePointer<json_t>) -> String? {
        var seen = Set<String>()
        var iterator = json_object_iter(object)
        while let current = iterator {
            let key = String(decoding: UnsafeRawBufferPointer(start: json_object_iter_key(current),
                                                              count: json_object_iter_key_len(current)),
                             as: UTF8.self)
            if !seen.insert(key).inserted { return key }
            iterator = json_object_iter_next(object, current)
        }
        return nil
    }

    /// Builds a new jansson value; the caller releases it.
    private static func make(_ value: JSONValue) -> UnsafeMutablePointer<json_t> {
        switch value {
        case .null:
            return json_null()
        case .bool(let bool):
            return bool ? json_true() : json_false()
        case .int(let int):
            return json_integer(json_int_t(int))
        case .double(let double):
            // JSON has no NaN or infinity; jansson refuses them, so they travel as null.
            return json_real(double) ?? json_null()
        case .string(var string):
            if string.isEmpty { return json_string("") }
            return string.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { json_stringn_nocheck($0.baseAddress, $0.count) }
            }
        case .array(let items):
            let array = json_array()!
            for item in items { json_array_append_new(array, make(item)) }
            return array
        case .object(let members):
            let object = json_object()!
            for (key, member) in members {
                var key = key
                key.withUTF8 { utf8 in
                    utf8.withMemoryRebound(to: CChar.self) {
                        _ = json_object_setn_new_nocheck(object, $0.baseAddress, $0.count, make(member))
                    }
                }
            }
            return object
        }
    }
}
