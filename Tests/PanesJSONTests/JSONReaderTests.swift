@testable import PanesJSON
import PanesCore
import Testing

/// The codec's own reader: whatever it settles, jansson would have read the same way; the
/// rest (every error among it) is left to jansson.
@Suite struct JSONReaderTests {
    static func read(_ text: String) -> JSONValue? {
        Array(text.utf8).withUnsafeBytes { JSONReader.read($0) }
    }

    static func jansson(_ bytes: [UInt8]) -> JSONValue? {
        try? bytes.withUnsafeBytes { JSONCodec.janssonDecode($0) }.get()
    }

    @Test func aConnectFrameIsReadWithoutJansson() {
        let frame = #"{"type":"connect","id":1,"protocol":1,"client":"panes-load/1","workspace":"bench","#
            + #""auth":{"name":"bench-3"},"session":{"id":"1c9624edd062f8742b4b16bd3bc3a418","secret":"3f8"}}"#
        let value = Self.read(frame)
        #expect(value != nil)
        #expect(value == Self.jansson(Array(frame.utf8)))
        #expect(value?["session"]?["id"] == "1c9624edd062f8742b4b16bd3bc3a418")
    }

    @Test(arguments: [
        #"" \" \\ \/ \b \f \n \r \t \u00e9 \ud83c\udf0d \u0000 ""#, #"[-0, 0, -1.5e-3, 1E+2, 1e-400, 9223372036854775807]"#,
        #"{"": [], "a": {}, "é": "日本", "f\u0301": null}"#, " \t\r\n[true,false,null] \n", "-9223372036854775808",
        #"{"a":{"b":{"c":[[],[{}]]}}}"#, "\"raw \u{7F} and é\"",
    ])
    func whatItReadsIsWhatJanssonReads(_ text: String) {
        let value = Self.read(text)
        #expect(value != nil, "settled without jansson")
        #expect(value == Self.jansson(Array(text.utf8)))
    }

    /// Everything here is left to jansson, which refuses it or (the last two) reads it its way.
    @Test(arguments: [
        "", " ", "{", "[1,]", "01", "-", "1.", ".5", "1e", "+1", "truex", "nul", "[1] [2]", "\"\u{1}\"", "\"\\x\"",
        "\"\\ud83c\"", "\"\\udf0d\"", "\"\\ud83c\\u0041\"", "{\"a\":1,\"a\":2}", "{\"a\\u0000\":1}", "9223372036854775808",
        "1e400", "\u{FEFF}1", "{\"\u{E9}\":1,\"e\u{301}\":2}", "[\"\\u00e9\"\u{0}]",
    ])
    func whatItDoesNotSettleIsLeftToJansson(_ text: String) {
        #expect(Self.read(text) == nil)
    }

    @Test func invalidUTF8IsLeftToJansson() {
        for bytes: [UInt8] in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22],
                               [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xFF, 0x22]] {
            #expect(bytes.withUnsafeBytes { JSONReader.read($0) } == nil)
            #expect(Self.jansson(bytes) == nil, "jansson refuses it too")
        }
    }

    /// Keys that are the same to a Swift dictionary but not to jansson: jansson reads both and
    /// the later one wins, as before the reader existed.
    @Test func canonicallyEquivalentKeysReadAsTheyDidThroughJansson() throws {
        let value = try JSONCodec.decode("{\"\u{E9}\":1,\"e\u{301}\":2}").get()
        #expect(value == ["\u{E9}": 2])
    }

    /// Random values, written, then damaged here and there: the reader either declines or
    /// agrees with jansson, value for value.
    @Test func damagedTextIsReadAsJanssonReadsItOrLeftToIt() {
        var random = TestValues(state: 11)
        let pieces: [[UInt8]] = ["\\u0000", "\\ud83c\\udf0d", "\\ud83c", "\\u00e9", "\\/", "\\x", "\u{0}", "1e400", "-0",
                                 "01", "1.", "tru", " ", "[", "]", "{", "}", ":", ",", "\"", "\\"].map { Array($0.utf8) }
            + [[0xC3, 0x28], [0xED, 0xA0, 0x80], [0xFF]]
        var settled = 0
        for round in 0..<5_000 {
            var bytes = JSONCodec.encode(random.value(depth: 0))
            if round % 3 != 0 {
                for _ in 0...Int(random.next() % 3) {
                    let at = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count + 1))
                    switch random.next() % 3 {
                    case 0: if at < bytes.count { bytes.remove(at: at) }
                    case 1: bytes.insert(contentsOf: pieces[Int(random.next() % UInt64(pieces.count))], at: at)
                    default: if at < bytes.count { bytes[at] = UInt8(truncatingIfNeeded: random.next()) }
                    }
                }
            }
            guard let mine = bytes.withUnsafeBytes({ JSONReader.read($0) }) else { continue }
            settled += 1
            #expect(Self.jansson(bytes) == mine, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(settled > 1_600, "every undamaged text is settled by the reader")
    }
}

/// A small deterministic generator of JSON values for the tests above (a 64-bit LCG: only
/// variety is wanted here, not quality).
struct TestValues {
    var state: UInt64

    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 17
    }

    mutating func string() -> String {
        let pool = ["a", "Z", "\"", "\\", "/", "\u{0}", "\u{1}", "\u{8}", "\t", "\n", "\u{B}", "\u{C}", "\r", "\u{1F}",
                    "\u{7F}", "é", "日", "🌍", "\u{2028}", " ", "{", "]", "long enough to be kept on the heap"]
        return (0..<Int(next() % 8)).map { _ in pool[Int(next() % UInt64(pool.count))] }.joined()
    }

    mutating func value(depth: Int) -> JSONValue {
        switch next() % (depth > 3 ? 6 : 8) {
        case 0: return .null
        case 1: return .bool(next() % 2 == 0)
        case 2: return .int([0, -1, Int64.max, Int64.min, Int64(bitPattern: next())][Int(next() % 5)])
        case 3: return .double([0.0, -0.0, 1.5, 1e-300, 1.7976931348623157e308, 0.1, 1.0 / 3, 5e-324, 100][Int(next() % 9)])
        case 4, 5: return .string(string())
        case 6: return .array((0..<Int(next() % 4)).map { _ in value(depth: depth + 1) })
        default:
            var object: [String: JSONValue] = [:]
            for _ in 0..<Int(next() % 6) { object[string()] = value(depth: depth + 1) }
            return .object(object)
        }
    }
}
