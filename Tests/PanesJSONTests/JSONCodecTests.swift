import Foundation
import PanesCore
import PanesJSON
import Testing

/// The codec every frame goes through: what it accepts, what it refuses and why, and that
/// what it writes reads back the same.
@Suite struct JSONCodecTests {
    static let values: [JSONValue] = [
        .null, true, false, 0, -1, .int(Int64.max), .int(Int64.min), 1.5, -0.25, 1e-300, 1.7976931348623157e308,
        "", "plain", "quote \" backslash \\ slash /", "controls \u{0} \u{1} \n \t \u{1F}",
        "unicode é 日本 🌍 \u{1F468}\u{200D}\u{1F469}", "e\u{301}",
        [], [1, "two", [3], ["four": 4]], [:], ["a": ["b": ["c": .null]]], ["": "empty key", "ü": "ü"],
    ]

    @Test(arguments: values)
    func everyValueRoundTripsExactly(_ value: JSONValue) {
        let bytes = JSONCodec.encode(value)
        guard case .success(let back) = JSONCodec.decode(bytes) else {
            Issue.record("did not read back: \(String(decoding: bytes, as: UTF8.self))")
            return
        }
        #expect(back == value)
        if !Self.containsReal(value) {
            #expect(value.encodedSize == bytes.count, "encodedSize counts the bytes written")
        }
    }

    static func containsReal(_ value: JSONValue) -> Bool {
        switch value {
        case .double: true
        case .array(let items): items.contains(where: containsReal)
        case .object(let members): members.values.contains(where: containsReal)
        default: false
        }
    }

    @Test func keysThatAreTheSameTextInDifferentBytesAreRefusedNotMerged() {
        // NFC `é` and NFD `e` + U+0301: jansson keeps both, a Swift dictionary would keep one.
        for text in [#"{"jos\#u{E9}": 1, "jose\#u{301}": 2}"#, #"{"a": [{"\#u{2126}": 1, "\#u{3A9}": 2}]}"#] {
            guard case .failure(let error) = JSONCodec.decode(text) else {
                Issue.record("accepted \(text)")
                continue
            }
            #expect(error.kind == .malformed)
            #expect(error.description.contains("canonically equivalent"))
        }
        // Keys that are different text stay apart, whatever their bytes.
        guard case .success(let value) = JSONCodec.decode(#"{"jos\#u{E9}": 1, "josf": 2}"#) else {
            Issue.record("refused distinct keys")
            return
        }
        #expect(value.objectValue?.count == 2)
    }

    /// An object's members come in the client's order and are read by their bytes; a large one
    /// (sorted once) reads back every member and encodes in byte order.
    @Test func objectsInAnyOrderAreReadByTheirKeysBytes() throws {
        let value = try JSONCodec.decode(#"{"z":1,"\#u{E9}t\#u{E9}":2,"a":3,"\#u{3A9}":4,"abcdefghZ":5,"abcdefghA":6}"#).get()
        #expect(value["\u{E9}t\u{E9}"] == 2 && value["e\u{301}te\u{301}"] == nil)
        #expect(value["\u{3A9}"] == 4 && value["\u{2126}"] == nil)
        #expect(value == ["a": 3, "abcdefghA": 6, "abcdefghZ": 5, "z": 1, "\u{E9}t\u{E9}": 2, "\u{3A9}": 4])
        // Field names the protocol uses are not built again per frame; near misses are built.
        let names = ["type", "typ", "types", "id", "i", "idempotencyKey", "idempotencyKez", "idempotencyKeys", "session",
                     "sessio\u{E9}", "\u{212A}ind", "kind", "targetContentIdentifier", "targetContentIdentifieR", "re", "r"]
        let named = try JSONCodec.decode("{" + names.map { "\"\($0)\":0" }.joined(separator: ",") + "}").get()
        #expect(named.objectValue.map { $0.keys.map { Array($0.utf8) } } == names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
        let count = 50_000
        let text = "{" + (0..<count).reversed().map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        let large = try JSONCodec.decode(text).get()
        #expect(large.objectValue?.count == count)
        #expect((0..<count).allSatisfy { large["k\($0)"] == .int(Int64($0)) })
        let written = JSONCodec.encodeString(large)
        #expect(written.hasPrefix(#"{"k0":0,"k1":1,"k10":10,"k100":100,"#))
        #expect(try JSONCodec.decode(written).get() == large)
    }

    @Test func keysAreWrittenInSortedOrderSoTheSameMessageIsTheSameBytes() {
        let value: JSONValue = ["type": "reply", "re": 1, "ok": true, "result": ["z": 1, "a": 2, "m": ["y": 0, "b": 0]]]
        #expect(JSONCodec.encodeString(value) == #"{"ok":true,"re":1,"result":{"a":2,"m":{"b":0,"y":0},"z":1},"type":"reply"}"#)
    }

    /// jansson's exact bytes, which the codec writes itself: escapes (upper-case hex for other
    /// controls; `/`, DEL and non-ASCII as they are), integers at both ends, keys in byte order
    /// (keys sharing their first eight bytes included).
    @Test func textIsWrittenAsJanssonWritesIt() {
        #expect(JSONCodec.encodeString(.string("\u{1}\u{1F}\u{7F}\"\\/\u{8}\u{C}\n\r\tü\u{0}"))
            == #""\u0001\u001F\#u{7F}\"\\/\b\f\n\r\tü\u0000""#)
        #expect(JSONCodec.encodeString([.int(Int64.min), .int(Int64.max), 0, -1, 10])
            == "[-9223372036854775808,9223372036854775807,0,-1,10]")
        let keys: JSONValue = ["abcdefghX": 1, "abcdefgh": 2, "abcdefghA": 3, "z": 4, "é": 5, "": 6, "Z": 7, "a\u{0}": 8, "a": 9]
        #expect(JSONCodec.encodeString(keys)
            == #"{"":6,"Z":7,"a":9,"a\u0000":8,"abcdefgh":2,"abcdefghA":3,"abcdefghX":1,"z":4,"é":5}"#)
        #expect(JSONCodec.encodeString(["outer": ["b": [], "a": [:]], "n": .null, "t": true, "f": false])
            == #"{"f":false,"n":null,"outer":{"a":{},"b":[]},"t":true}"#)
    }

    /// Integers are written two digits at a time: every length, both sides of each power of ten
    /// (where a pair can end exactly, or leave one digit) and of each power of two (where the
    /// count of digits, estimated from the bit length, is corrected), and both signs, read as
    /// `%lld` does.
    @Test func integersOfEveryLengthAreTheirDecimalDigits() {
        var values: [Int64] = [0, Int64.min, Int64.max, Int64.min + 1]
        var power: Int64 = 1
        for _ in 0...18 {
            values += [power - 1, power, power + 1, 2 * power - 1, 5 * power]
            if power <= Int64.max / 10 { power *= 10 }
        }
        for shift in 1..<63 { values += [(Int64(1) << shift) - 1, Int64(1) << shift] }
        values += values.map { $0 == Int64.min ? 0 : -$0 }
        for value in values {
            #expect(JSONCodec.encodeString(.int(value)) == String(value), "\(value)")
        }
    }

    /// Text is checked for escapes a word at a time: a byte to escape is found at every place in
    /// texts of every length around a word's.
    @Test func aByteToEscapeIsFoundWhereverItIs() {
        for length in 1..<26 {
            for position in 0..<length {
                for (byte, escaped) in [("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{1}", #"\u0001"#)] {
                    var text = Array(repeating: "x", count: length)
                    text[position] = byte
                    var expected = Array(repeating: "x", count: length)
                    expected[position] = escaped
                    #expect(JSONCodec.encodeString(.string(text.joined())) == "\"" + expected.joined() + "\"")
                }
            }
            let plain = String(repeating: "é", count: length)
            #expect(JSONCodec.encodeString(.string(plain)) == "\"" + plain + "\"")
        }
    }

    /// `encodedSize` reads a text eight bytes at a time: every byte that takes an escape is
    /// counted, at every place in texts of every length around a word's, as the encoder writes it.
    @Test func encodedSizeCountsAnEscapeWhereverItIs() {
        let bytes = ["\"", "\\", "\n", "\t", "\u{8}", "\u{C}", "\r", "\u{0}", "\u{1}", "\u{1F}", " ", "\u{7F}", "/", "é", "🌍"]
        for length in 1..<26 {
            for position in 0..<length {
                for byte in bytes {
                    var text = Array(repeating: "x", count: length)
                    text[position] = byte
                    let value = JSONValue.string(text.joined())
                    #expect(value.encodedSize == JSONCodec.encode(value).count, "\(text)")
                }
            }
            // Two in one word, and every byte of a word.
            for byte in bytes {
                let value = JSONValue.string(String(repeating: byte, count: length))
                #expect(value.encodedSize == JSONCodec.encode(value).count, "\(byte) × \(length)")
            }
        }
        var integers: [Int64] = [0, -1, Int64.max, Int64.min, Int64.min + 1]
        for power in 0..<19 {
            let ten = (0..<power).reduce(Int64(1)) { product, _ in product * 10 }
            integers += [ten - 1, ten, ten + 1, -ten, 1 - ten]
        }
        for integer in integers {
            #expect(JSONValue.int(integer).encodedSize == JSONCodec.encode(.int(integer)).count, "\(integer)")
        }
    }

    /// A document wholly in the decoding thread's arena is dropped without jansson walking it to
    /// free nothing; one larger than the arena has blocks from malloc and must still be released.
    /// About 0.8 MB of jansson blocks a decode: kept, 150 decodes would grow the process by 120 MB.
    @Test func aDocumentLargerThanTheArenaIsReleased() throws {
        let large = Array(("[" + (0..<20_000).map { "\($0)" }.joined(separator: ",") + "]").utf8)
        let resident = { () -> Int in
            let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
            return (statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 4_096
        }
        #expect(try JSONCodec.decode(large).get().arrayValue?.count == 20_000)
        let before = resident()
        for _ in 0..<150 { _ = JSONCodec.decode(large) }
        let grown = resident() - before
        #expect(grown < 48 << 20, "grew \(grown >> 20) MB over 150 decodes")
    }

    /// The text grows past the writer's first buffer without losing anything.
    @Test func longTextIsWrittenWhole() throws {
        let long = String(repeating: "0123456789\"", count: 1_000)
        let value: JSONValue = ["items": .array((0..<500).map { .string("\($0) \(long.prefix($0))") }), "long": .string(long)]
        let bytes = JSONCodec.encode(value, headroom: 16)
        #expect(try JSONCodec.decode(Array(bytes.dropFirst(16))).get() == value)
    }

    @Test func integersAndRealsStayApart() throws {
        #expect(try JSONCodec.decode("[1, 1.0, -0, 1e2]").get() == [1, 1.0, 0, 100.0])
    }

    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "[1, 99999999999999999999999]", "1e400", "-1e400"])
    func numbersOutsideTheExactRangeAreReportedAsSuch(_ text: String) {
        guard case .failure(let error) = JSONCodec.decode(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(error.kind == .numberOutOfRange, "\(error.description)")
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "nul", "\"unterminated", "[1] [2]", "{\"a\":1,\"a\":2}"])
    func malformedTextIsReportedWithTheReason(_ text: String) {
        guard case .failure(let error) = JSONCodec.decode(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(error.kind == .malformed)
        #expect(!error.description.isEmpty)
    }

    @Test func invalidUTF8IsRefused() {
        guard case .failure(let error) = JSONCodec.decode([0x22, 0xC3, 0x28, 0x22]) else {
            Issue.record("accepted invalid UTF-8")
            return
        }
        #expect(error.kind == .malformed)
    }

    static func decode(_ text: String, maxDepth: Int) -> Result<JSONValue, JSONCodec.DecodeError> {
        Array(text.utf8).withUnsafeBytes { JSONCodec.decode($0, maxDepth: maxDepth) }
    }

    @Test func nestingIsLimitedBeforeParsing() {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect((try? Self.decode(ok, maxDepth: 64).get()) != nil)
        guard case .failure(let error) = Self.decode(deep, maxDepth: 64) else {
            Issue.record("accepted 65 levels")
            return
        }
        #expect(error.kind == .tooDeep)
        // Brackets inside strings are text, not nesting.
        let quoted = "[\"" + String(repeating: "[{\\\"", count: 1_000) + "\"]"
        #expect((try? Self.decode(quoted, maxDepth: 4).get()) != nil)
        // Only a text with more brackets than the limit (strings included) is scanned: an
        // escaped quote or backslash neither ends a string early nor hides the brackets after it.
        for length in 0..<20 {
            let pad = String(repeating: "x", count: length)
            let text = "[\"" + pad + "\\\"" + pad + "\\\\" + pad + String(repeating: "[{", count: 8) + "\"]"
            #expect((try? Self.decode(text, maxDepth: 2).get()) != nil, "\(text)")
            let deep = "[\"" + pad + "\\\"" + pad + "\\\\\"," + "[[[1]]]" + "]"
            #expect((try? Self.decode(deep, maxDepth: 4).get()) != nil, "\(deep)")
            guard case .failure(let error) = Self.decode(deep, maxDepth: 3) else {
                Issue.record("accepted 4 levels after a string of \(length)")
                continue
            }
            #expect(error.kind == .tooDeep)
        }
        // As many brackets as the limit allows, in strings or not, at any place in the text.
        for text in ["[[[[]]]]", "[[[\"[\"]]]", "[\"[\",\"{\",\"[\"]", "  [[[ [ ] ] ] ]  ", "{\"a\":{\"b\":[[1]]}}"] {
            #expect((try? Self.decode(text, maxDepth: 4).get()) != nil, "\(text)")
        }
        #expect(Self.decode("[[[[[]]]]]", maxDepth: 4).failureKind == .tooDeep)
        #expect(Self.decode("[{\"a\":[{\"b\":[]}]}]", maxDepth: 4).failureKind == .tooDeep)
        // Brackets are counted eight bytes at a time: one over the limit is seen wherever it falls.
        for padding in 0..<17 {
            let pad = String(repeating: " ", count: padding)
            #expect(Self.decode(pad + "[[[[[1]]]]]", maxDepth: 4).failureKind == .tooDeep, "\(padding)")
            #expect(Self.decode(pad + "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":1}}}}}", maxDepth: 4).failureKind == .tooDeep)
            #expect(Self.decode(pad + "[\"\\u005b\",[[{\"a\":1}]]]", maxDepth: 4).failureKind == nil)
        }
        // Past the counters' first flush (255 words): one bracket over the limit is still seen.
        for padding in [2_100, 4_093, 9_000] {
            let pad = String(repeating: " ", count: padding)
            let over = pad + String(repeating: "[", count: 301) + String(repeating: "]", count: 301)
            let at = pad + String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
            #expect(Self.decode(over, maxDepth: 300).failureKind == .tooDeep)
            #expect(Self.decode(at, maxDepth: 300).failureKind == nil)
        }
        // More brackets than a byte lane can count before it is emptied: none are lost.
        let manyInAString = "[\"" + String(repeating: "[", count: 2_100) + "\",[[[1]]]]"
        #expect(Self.decode(manyInAString, maxDepth: 3).failureKind == .tooDeep)
        #expect(Self.decode(manyInAString, maxDepth: 4).failureKind == nil)
        // 256 words of brackets: 256 in every lane, which would read as 7 if a lane overflowed.
        let lanesFull = String(repeating: "[", count: 2_048) + String(repeating: "]", count: 2_048)
        #expect(Self.decode(lanesFull, maxDepth: 7).failureKind == .tooDeep)
        // A hostile depth never reaches the parser.
        guard case .failure(let hostile) = Self.decode(String(repeating: "[", count: 1_000_000), maxDepth: 64) else {
            Issue.record("accepted a million levels")
            return
        }
        #expect(hostile.kind == .tooDeep)
    }

    /// jansson's blocks come from a per-thread buffer while a thread decodes: documents larger
    /// than it, many threads at once, and jansson's own encoder meanwhile all stay whole.
    @Test func decodingOnManyThreadsAtOnceGivesEachItsOwnValues() async {
        let large = "{" + (0..<400).map { "\"key\($0)\": [\"value \($0)\", \($0), {\"n\": \($0)}]" }.joined(separator: ",") + "}"
        await withTaskGroup(of: Bool.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for round in 0..<50 {
                        let small = "{\"task\": \(task), \"round\": \(round), \"text\": \"\(String(repeating: "x", count: round))\"}"
                        guard case .success(let value) = JSONCodec.decode(small), value["task"] == .int(Int64(task)),
                              value["round"] == .int(Int64(round)), value["text"]?.stringValue?.count == round
                        else { return false }
                        guard case .success(let big) = JSONCodec.decode(large), big.objectValue?.count == 400,
                              big["key399"]?.arrayValue?[2]["n"] == 399
                        else { return false }
                        let pretty = JSONCodec.encodeString(["task": .int(Int64(task))], pretty: true)
                        guard pretty.contains("\"task\": \(task)") else { return false }
                    }
                    return true
                }
            }
            for await whole in group { #expect(whole) }
        }
    }

    @Test func encodingLeavesRoomForTheTransportsHeadroom() {
        let bytes = JSONCodec.encode(["a": 1], headroom: 16)
        #expect(bytes.prefix(16).allSatisfy { $0 == 0 })
        #expect(String(decoding: bytes.dropFirst(16), as: UTF8.self) == #"{"a":1}"#)
    }

    @Test func nonFiniteRealsTravelAsNull() {
        #expect(JSONCodec.encodeString([.double(.nan), .double(.infinity)]) == "[null,null]")
    }
}

extension Result where Failure == JSONCodec.DecodeError {
    var failureKind: JSONCodec.DecodeError.Kind? {
        if case .failure(let error) = self { error.kind } else { nil }
    }
}
