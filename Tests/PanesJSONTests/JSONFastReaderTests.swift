import PanesCore
@testable import PanesJSON
import Testing

/// `JSONFastReader` against jansson, differentially: for real frames and for mutations of them
/// (every byte replaced, deleted, or with a byte inserted before it; random edits; deep
/// nesting; repeated keys; bytes beyond ASCII and broken UTF-8), whatever the reader takes must
/// be jansson's value exactly, and `JSONCodec.decode` must give what jansson alone gives: the
/// same value or the same refusal, word for word.
@Suite struct JSONFastReaderTests {
    /// Frames as clients send them: panes-load's and the web client's, and the shapes around them.
    static let frames: [String] = [
        #"{"type":"connect","id":1,"protocol":1,"client":"panes-load/1","workspace":"bench","auth":{"name":"user-17"},"session":{"id":"ses_0123456789abcdef0123456789abcdef","secret":"sec_00112233445566778899aabbccddeeff00112233"}}"#,
        #"{"type":"connect","id":1,"protocol":1,"client":"panes-load/1","workspace":"bench","auth":{"token":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln"}}"#,
        #"{"type":"setPreference","id":42,"keyPath":"editor.wordCount","value":true,"scope":"user"}"#,
        #"{"type":"observe","id":2,"keyPath":"editor","options":["initial","new","old"]}"#,
        #"{"type":"edit","id":-7,"document":"doc_1","base":12,"operations":[[3,"abc",-2],{"retain":0}],"meta":null,"flag":false}"#,
        "{ \"a\" : [ 1 , 2 ,\t3 ] ,\n\"b\" :\r{ } , \"c\" : [ ] , \"\" : \"\" }\n",
        #"[0,-0,9,-9,10,123456789012345678,-123456789012345678,"x~"# + "\u{7F}" + #"",{"k":{"k":{"k":[[[]]]}}}]"#,
        #""just a string""#, "  17  ", "null", "true", "false", "{}", "[]",
    ]

    /// Bytes that change a text's meaning, or that the reader leaves to jansson.
    static let alphabet: [UInt8] = Array(#"{}[]:,"\ 0-1.eEtfnu/a"#.utf8) + [0x09, 0x0A, 0x0D, 0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xED, 0xFF]

    @Test func everyFrameIsReadWithoutJansson() throws {
        for frame in Self.frames {
            let read = Array(frame.utf8).withUnsafeBytes { JSONFastReader.read($0) }
            #expect(read != nil, "not taken: \(frame)")
        }
    }

    @Test func everySingleByteEditOfAFrameDecodesAsJanssonDoes() throws {
        var tally = Tally()
        for frame in Self.frames {
            let bytes = Array(frame.utf8)
            for position in 0...bytes.count {
                if position < bytes.count {
                    var deleted = bytes
                    deleted.remove(at: position)
                    tally.check(deleted)
                }
                for byte in Self.alphabet {
                    var inserted = bytes
                    inserted.insert(byte, at: position)
                    tally.check(inserted)
                    if position < bytes.count, bytes[position] != byte {
                        var replaced = bytes
                        replaced[position] = byte
                        tally.check(replaced)
                    }
                }
            }
        }
        // Both paths were taken many times, so the comparison meant something.
        #expect(tally.taken > 1_000 && tally.left > 10_000, "taken \(tally.taken), left \(tally.left)")
    }

    @Test func randomEditsOfFramesDecodeAsJanssonDoes() throws {
        var random = SplitMix(seed: 27)
        var tally = Tally()
        for _ in 0..<6_000 {
            var bytes = Array(Self.frames[Int(random.next() % UInt64(Self.frames.count))].utf8)
            for _ in 0...(random.next() % 4) {
                let position = Int(random.next() % UInt64(bytes.count + 1))
                let byte = random.next() % 3 == 0 ? UInt8(truncatingIfNeeded: random.next())
                                                  : Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))]
                switch random.next() % 3 {
                case 0 where position < bytes.count: bytes[position] = byte
                case 1 where position < bytes.count: bytes.remove(at: position)
                default: bytes.insert(byte, at: position)
                }
            }
            tally.check(bytes)
        }
        #expect(tally.taken > 100 && tally.left > 1_000, "taken \(tally.taken), left \(tally.left)")
    }

    @Test func repeatedKeysAreRefusedAsJanssonRefusesThem() throws {
        var tally = Tally()
        for text in [#"{"a":1,"a":1}"#, #"{"a":1,"b":2,"a":3}"#, #"{"type":"connect","id":1,"type":"connect"}"#,
                     #"{"k":{"x":1,"y":{},"x":[]}}"#, #"[{"":1,"":2}]"#, #"{"longer-than-8":1,"longer-than-8":2}"#,
                     #"{"longer-than-8a":1,"longer-than-8b":2,"longer-than-8a":3}"#] {
            tally.check(Array(text.utf8))
            let decoded = JSONCodec.decode(Array(text.utf8))
            guard case .failure(let error) = decoded else {
                Issue.record("accepted: \(text)")
                continue
            }
            #expect(error.description.hasPrefix("duplicate object key"), "\(error)")
        }
        #expect(tally.taken == 0)
    }

    /// Objects of more members than the small-object sort handles by insertion (16), where a
    /// repeated key is found by the other sort: every pair of places for the twin, with keys
    /// that share their first eight bytes and keys that do not.
    @Test func repeatedKeysInLargeObjectsAreRefusedAsJanssonRefusesThem() throws {
        var tally = Tally()
        for count in [17, 24, 40] {
            for prefix in ["k", "shared-prefix-"] {
                let keys = (0..<count).map { "\(prefix)\(($0 * 7) % count)" }
                #expect(Set(keys).count == count)
                tally.check(Array(("{" + keys.map { #""\#($0)":1"# }.joined(separator: ",") + "}").utf8))
                for twin in stride(from: 0, to: count, by: 5) {
                    for place in [0, count / 2, count] {
                        var members = keys.map { #""\#($0)":1"# }
                        members.insert(#""\#(keys[twin])":2"#, at: place)
                        let text = "{" + members.joined(separator: ",") + "}"
                        tally.check(Array(text.utf8))
                        guard case .failure(let error) = JSONCodec.decode(Array(text.utf8)) else {
                            Issue.record("accepted: \(text)")
                            continue
                        }
                        #expect(error.description.hasPrefix("duplicate object key"), "\(error)")
                    }
                }
            }
        }
        #expect(tally.taken == 6 && tally.left > 50, "taken \(tally.taken), left \(tally.left)")
    }

    @Test func nestingPastTheReadersDepthIsLeftToJansson() throws {
        var tally = Tally()
        for depth in 0...(JSONFastReader.maxDepth + 3) {
            let arrays = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
            let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
            for text in [arrays, objects] {
                let taken = Array(text.utf8).withUnsafeBytes { JSONFastReader.read($0) } != nil
                #expect(taken == (depth <= JSONFastReader.maxDepth), "depth \(depth)")
                tally.check(Array(text.utf8))
            }
        }
        // Over `JSONCodec.decode`'s own limit the refusal is the codec's, as before.
        guard case .failure(let error) = Array("[[[1]]]".utf8).withUnsafeBytes({ JSONCodec.decode($0, maxDepth: 2) }) else {
            Issue.record("accepted past maxDepth")
            return
        }
        #expect(error.kind == .tooDeep)
    }

    @Test func integersNearTheLimitsDecodeAsJanssonDoes() throws {
        var tally = Tally()
        let digits = ["0", "7", "10", "99999999999999999", "123456789012345678", "999999999999999999",
                      "1000000000000000000", "9223372036854775807", "9223372036854775808", "99999999999999999999"]
        for number in digits {
            for text in [number, "-" + number, "[" + number + "]", #"{"n":"# + number + "}", number + ".5",
                         number + "e2", number + "E-1", "0" + number, "-0" + number, number + "x", number + " "] {
                tally.check(Array(text.utf8))
            }
        }
        #expect(tally.taken > 20)
    }

    /// A string is read a word at a time and ended at the first byte of the word that is not
    /// plain: each byte that ends or refuses a string, alone or with another after it in the
    /// same word (where a borrow from the first could mark the second), at every offset of the
    /// first three words, with the text running on past it or ending there.
    @Test func aStringsFirstBytePastPlainIsFoundAtEveryOffsetOfAWord() throws {
        var tally = Tally()
        let special: [UInt8] = [0x22, 0x5C, 0x00, 0x01, 0x1F, 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF]
        for offset in 0..<24 {
            for first in special {
                for second: UInt8? in [nil, 0x22, 0x5C, 0x1F, 0x80, 0x61] {
                    var inner = [UInt8](repeating: UInt8(ascii: "a"), count: offset) + [first]
                    if let second { inner.append(second) }
                    for tail: [UInt8] in [Array("bcdefghijk\"".utf8), Array("\"".utf8), []] {
                        tally.check([0x22] + inner + tail)
                        tally.check(Array(#"{"k":"#.utf8) + [0x22] + inner + tail + Array(#","x":1}"#.utf8))
                    }
                }
            }
        }
        #expect(tally.taken > 500 && tally.left > 5_000, "taken \(tally.taken), left \(tally.left)")
    }

    @Test func stringsBeyondPrintableASCIIAreLeftToJansson() throws {
        var tally = Tally()
        for inner: [UInt8] in [[0xC3, 0xA9], [0x65, 0xCC, 0x81], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80],
                               [0xFF], [0x00], [0x1F], [0x7F], Array(#"\u00e9"#.utf8), Array(#"\u0000"#.utf8), Array(#"\""#.utf8)] {
            for text in [[0x22] + inner + [0x22], Array(#"{""#.utf8) + inner + Array(#"":1}"#.utf8)] {
                let taken = text.withUnsafeBytes { JSONFastReader.read($0) } != nil
                #expect(taken == (inner == [0x7F]), "\(inner)")
                tally.check(text)
            }
        }
    }
}

/// Compares one text's decoding by the codec (reader first) with jansson's alone.
private struct Tally {
    var taken = 0
    var left = 0

    mutating func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        bytes.withUnsafeBytes { buffer in
            let jansson = JSONCodec.janssonDecode(buffer)
            if let read = JSONFastReader.read(buffer) {
                taken += 1
                guard case .success(let value) = jansson, identical(read, value) else {
                    Issue.record("the reader took \(show(bytes)) as \(read); jansson: \(jansson)", sourceLocation: sourceLocation)
                    return
                }
            } else {
                left += 1
            }
            switch (JSONCodec.decode(buffer), jansson) {
            case (.success(let decoded), .success(let value)) where identical(decoded, value): break
            case (.failure(let decoded), .failure(let error)) where decoded.kind == error.kind && decoded.description == error.description: break
            case (let decoded, _):
                Issue.record("\(show(bytes)): decoded \(decoded), jansson \(jansson)", sourceLocation: sourceLocation)
            }
        }
    }

    private func show(_ bytes: [UInt8]) -> String {
        bytes.map { $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : "<\(String($0, radix: 16))>" }.joined()
    }
}

/// The same case, the same payload, keys the same bytes in the same order: stricter than `==`.
private func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.int(let x), .int(let y)): return x == y
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
    case (.object(let x), .object(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { $0.key.utf8.elementsEqual($1.key.utf8) && identical($0.value, $1.value) }
    default: return false
    }
}

/// A small seeded generator, so a failure repeats.
private struct SplitMix {
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
