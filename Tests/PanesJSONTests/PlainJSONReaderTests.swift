import PanesCore
@testable import PanesJSON
import Testing

/// The plain-JSON reader gives jansson's value or nothing: on texts it reads, jansson reads the
/// same value; on others `JSONCodec.decode` answers what jansson answers, refusals included.
@Suite struct PlainJSONReaderTests {
    /// A `connect` frame as the JS client sends it, and other frames of the protocol.
    static let frames = [
        #"{"type":"connect","id":1,"token":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2ln","persistentIdentifier":"ses_0123456789abcdef","secret":"0123456789abcdef0123456789abcdef","configuration":"default","traits":{"width":"regular","pointer":"fine"},"protocol":1}"#,
        #"{"type":"ping","id":7}"#,
        #" { "type" : "setPreference" , "id" : -42 , "value" : [ true , false , null , [ ] , { } ] } "#,
        "\t\r\n[0, -1, 123456789012345678, -123456789012345678, \"\"]\n",
        "0", "-7", "true", "null", #""text""#, "[]", "{}",
    ]

    /// Texts outside the subset: each left to jansson, which accepts or refuses it.
    static let others = [
        "-0", "01", "1.5", "1e3", "1E3", "-", "1234567890123456789", "99999999999999999999", "truex", "nul",
        "[1,]", "[,1]", "{\"a\":1,}", "{\"a\" 1}", "{1:2}", #"{"a":1,"a":2}"#, #"{"a":{"b":1,"b":1}}"#,
        #""a\"b""#, #""\u0041""#, #""\u0000""#, "\"caf\u{E9}\"", "\"\u{7F}\"", "\"tab\there\"", "\"open",
        "", " ", "[1] x", "[1][2]", "{\"a\":1}}", "[", "]", "\u{FEFF}{}", "[1 2]", "{\"a\":1 \"b\":2}",
        String(repeating: "[", count: 40) + String(repeating: "]", count: 40), "[-]", "[--1]", "[+1]", "[.5]", "[0x10]",
        "[true1]", "[1true]", "[\"a\"\"b\"]", "{\"a\"::1}", "[1,,2]", "\u{0}", "[1]\u{0}",
    ]

    @Test(arguments: frames)
    func aPlainTextReadsAsJanssonReadsIt(_ text: String) throws {
        let plain = try #require(read(text))
        #expect(plain == (try jansson(text).get()))
    }

    @Test(arguments: others)
    func anyOtherTextIsLeftToJansson(_ text: String) {
        #expect(read(text) == nil, "\(text.debugDescription)")
        expectSameVerdict(text)
    }

    /// Random plain values written out, then mutated byte by byte: whatever the reader accepts,
    /// jansson accepts with the same value, and `decode` gives jansson's verdict on the rest.
    @Test func generatedAndMutatedTextsAgreeWithJansson() {
        var random = SplitMix(seed: 27)
        var accepted = 0, leftToJansson = 0
        for _ in 0..<300 {
            let value = Self.plainValue(&random, depth: 0)
            let text = String(decoding: JSONCodec.encode(value), as: UTF8.self)
            #expect(read(text) == value, "\(text)")
            for _ in 0..<10 {
                var mutated = Array(text.utf8)
                let position = Int(random.next() % UInt64(mutated.count + 1))
                let inserts: [UInt8] = Array(#"{}[],:"\ 0-1.eEtfn"#.utf8) + [0x00, 0x7F, 0xC3]
                switch random.next() % 3 {
                case 0 where position < mutated.count: mutated.remove(at: position)
                case 1 where position < mutated.count: mutated[position] = inserts[Int(random.next() % UInt64(inserts.count))]
                default: mutated.insert(inserts[Int(random.next() % UInt64(inserts.count))], at: position)
                }
                let mutatedText = String(decoding: mutated, as: UTF8.self)
                guard Array(mutatedText.utf8) == mutated else { continue }  // not UTF-8: the transport refuses it first
                if let plain = read(mutatedText) {
                    accepted += 1
                    #expect((try? jansson(mutatedText).get()) == plain, "\(mutatedText)")
                } else {
                    leftToJansson += 1
                    expectSameVerdict(mutatedText)
                }
            }
        }
        // Both sides were exercised.
        #expect(accepted > 100 && leftToJansson > 1_000, "\(accepted) read, \(leftToJansson) left to jansson")
    }

    private func read(_ text: String) -> JSONValue? {
        bytes(text).withUnsafeBytes { PlainJSONReader.read($0) }
    }

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func jansson(_ text: String) -> Result<JSONValue, JSONCodec.DecodeError> {
        bytes(text).withUnsafeBytes { JSONCodec.janssonDecode($0) }
    }

    /// `decode` answers exactly what jansson answers: the same value, or the same refusal.
    private func expectSameVerdict(_ text: String) {
        let decoded = JSONCodec.decode(bytes(text)), jansson = jansson(text)
        switch (decoded, jansson) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(text.debugDescription)")
        case (.failure(let a), .failure(let b)): #expect(a.kind == b.kind && a.description == b.description, "\(text.debugDescription)")
        default: Issue.record("decode and jansson disagree on \(text.debugDescription): \(decoded) vs \(jansson)")
        }
    }

    private static func plainValue(_ random: inout SplitMix, depth: Int) -> JSONValue {
        let choice = depth > 3 ? random.next() % 5 : random.next() % 7
        switch choice {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: random.next()) % 999_999_999_999_999_999)
        case 3: return .string(plainString(&random))
        case 4: return .int(Int64(random.next() % 10))
        case 5: return .array((0..<Int(random.next() % 4)).map { _ in plainValue(&random, depth: depth + 1) })
        default:
            var object: [String: JSONValue] = [:]
            for _ in 0..<Int(random.next() % 5) { object[plainString(&random)] = plainValue(&random, depth: depth + 1) }
            return .object(object)
        }
    }

    private static func plainString(_ random: inout SplitMix) -> String {
        let alphabet = Array(" !#$%&'()*+,-./0123456789:;<=>?@ABCXYZ[]^_`abcxyz{|}~".utf8)
        return String(decoding: (0..<Int(random.next() % 12)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] },
                      as: UTF8.self)
    }
}

/// A small deterministic generator, so a failure repeats.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
