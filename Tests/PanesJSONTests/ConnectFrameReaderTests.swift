import PanesCore
@testable import PanesJSON
import Testing

/// `ConnectFrameReader` against the general way (`JSONCodec.decode`, then `MessageDecoder`),
/// differentially: for real `connect` frames and mutations of them (every byte replaced,
/// deleted, or with a byte inserted before it; random edits; fields at and past their limits;
/// repeated and unknown keys; `null`s), whatever the reader takes must be the request the
/// general way decodes, field for field and byte for byte; and it must take the plain frames
/// clients send, or the storm's resumes would not be read by it.
@Suite struct ConnectFrameReaderTests {
    static let frames: [String] = [
        // panes-load's resume and new connect, the web client's with traits and state.
        #"{"type":"connect","id":1,"protocol":1,"client":"panes-load/1","workspace":"bench","auth":{"name":"user-17"},"session":{"id":"ses_0123456789abcdef0123456789abcdef","secret":"sec_00112233445566778899aabbccddeeff00112233"}}"#,
        #"{"id":"c1","type":"connect","protocol":1,"auth":{"token":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln"}}"#,
        #"{"type":"connect","id":7,"protocol":1,"client":"web/2.1","workspace":"w-1.x_y","auth":{"name":"  bob  "},"traits":{"width":"compact","pointer":"coarse"},"state":{"visible":true,"focused":false}}"#,
        #"{ "type" : "connect" , "id" : -3 , "protocol" : 0 , "ticket" : "tkt_abc" , "auth" : { "name" : "a" , "token" : "t" } , "traits" : { } , "state" : { "focused" : true } }"#,
        #"{"type":"connect","id":9,"protocol":1000,"session":{"secret":"s","id":"ses_1"},"auth":{"name":"x"},"traits":{"pointer":"fine"}}"#,
        #"{"type":"connect","id":2,"protocol":1}"#,
    ]

    /// Bytes that change a frame's meaning, or that the reader leaves to the general way.
    static let alphabet: [UInt8] = Array(#"{}[]:,"\ 0-19.etfnu/a "#.utf8) + [0x09, 0x0A, 0x00, 0x7F, 0xC3]

    @Test func plainConnectFramesAreReadWithoutATree() {
        for frame in Self.frames {
            let read = Array(frame.utf8).withUnsafeBytes { ConnectFrameReader.read($0, settings: Settings()) }
            #expect(read != nil, "not taken: \(frame)")
        }
    }

    @Test func everySingleByteEditOfAFrameReadsAsTheGeneralWay() {
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
        #expect(tally.taken > 1_000 && tally.left > 10_000, "taken \(tally.taken), left \(tally.left)")
    }

    @Test func randomEditsOfFramesReadAsTheGeneralWay() {
        var random = SplitMix(seed: 5)
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

    /// Each field at its limit and one past it, of the wrong type, `null`, repeated; keys the
    /// reader does not take; the limits that come from settings.
    @Test func fieldsAtTheirLimitsReadAsTheGeneralWay() {
        var tally = Tally()
        // `id` and `protocol` are added unless the member gives them (twice is a repeat, left).
        func frame(_ member: String) -> String {
            #"{"type":"connect""# + (member.hasPrefix(#""id":"#) ? "" : #","id":1"#)
                + (member.hasPrefix(#""protocol":"#) ? "" : #","protocol":1"#) + "," + member + "}"
        }
        func string(_ count: Int, _ byte: String = "a") -> String { "\"" + String(repeating: byte, count: count) + "\"" }
        var members: [String] = []
        for count in [0, 1, 64, 65] {
            members += [#""id":\#(string(count))"#, #""workspace":\#(string(count))"#, #""ticket":\#(string(count))"#,
                        #""auth":{"name":\#(string(count))}"#, #""auth":{"name":\#(string(count, " "))}"#,
                        #""session":{"id":\#(string(count)),"secret":"s"}"#, #""session":{"id":"s","secret":\#(string(count))}"#,
                        #""traits":{"width":\#(string(count))}"#]
        }
        for count in [127, 128, 129] { members.append(#""client":\#(string(count))"#) }
        for token in [0, 1, 16, 17] { members.append(#""auth":{"token":\#(string(token))}"#) }
        for version in ["-1", "0", "1000", "1001", "1.0", "\"1\"", "null", "123456789012345678901"] {
            members.append(#""protocol":\#(version)"#)
        }
        members += [
            #""workspace":"a b""#, #""workspace":"a/b""#, #""workspace":null"#, #""auth":{}"#, #""auth":{"name":"a","name":"b"}"#,
            #""auth":{"name":1}"#, #""auth":{"name":"a","token":1}"#, #""auth":"alice""#, #""auth":null"#,
            #""session":{"id":"s"}"#, #""session":{}"#, #""session":{"id":"s","secret":"s","extra":1}"#,
            #""traits":{"width":"wide"}"#, #""traits":{"pointer":"Fine"}"#, #""traits":[]"#,
            #""state":{"visible":1}"#, #""state":{"visible":null}"#, #""state":{"visible":true,"visible":true}"#,
            #""state":{}"#, #""idempotencyKey":"k1""#, #""idempotencyKey":null"#, #""extra":1"#, #""type":"connect""#,
            #""type":"Connect""#, #""id":"x","id":"y""#, #""id":1.5"#, #""id":{"a":1}"#, #""ticket":7"#,
            #""protocol":1,"protocol":1"#,
        ]
        for member in members {
            let text = frame(member)
            for settings in [Settings(), Self.settings(maxTokenBytes: 16), Self.settings(maxJSONDepth: 1)] {
                tally.check(Array(text.utf8), settings: settings)
            }
        }
        #expect(tally.taken > 30 && tally.left > 100, "taken \(tally.taken), left \(tally.left)")
    }

    /// Frames that are not `connect`, and values the grammar leaves to jansson, are left.
    @Test func otherFramesAreLeftToTheGeneralWay() {
        for text in [#"{"type":"ping","id":1}"#, #"{"type":"setUserInfo","id":1,"userInfo":{}}"#, #"[1]"#, #""connect""#,
                     #"{"type":"connect","id":1,"protocol":1,"client":"caf\u00e9"}"#,
                     "{\"type\":\"connect\",\"id\":1,\"protocol\":1,\"client\":\"caf\u{E9}\"}", ""] {
            let read = Array(text.utf8).withUnsafeBytes { ConnectFrameReader.read($0, settings: Settings()) }
            #expect(read == nil, "taken: \(text)")
        }
    }

    static func settings(maxTokenBytes: Int? = nil, maxJSONDepth: Int? = nil) -> Settings {
        var settings = Settings()
        if let maxTokenBytes { settings.maxTokenBytes = maxTokenBytes }
        if let maxJSONDepth { settings.maxJSONDepth = maxJSONDepth }
        return settings
    }
}

/// Compares one frame read by `ConnectFrameReader` with the general way's request.
private struct Tally {
    var taken = 0
    var left = 0

    mutating func check(_ bytes: [UInt8], settings: Settings = Settings(), sourceLocation: SourceLocation = #_sourceLocation) {
        bytes.withUnsafeBytes { buffer in
            guard let read = ConnectFrameReader.read(buffer, settings: settings) else {
                left += 1
                return
            }
            taken += 1
            guard case .success(let json) = JSONCodec.decode(buffer, maxDepth: settings.maxJSONDepth),
                  case .success(let decoded) = MessageDecoder(settings: settings).decode(json) else {
                Issue.record("taken, but the general way refuses \(show(bytes))", sourceLocation: sourceLocation)
                return
            }
            guard let connect = read.request as? ConnectRequest, let general = decoded.request as? ConnectRequest,
                  read.id == decoded.id, read.typeIndex == decoded.typeIndex, read.key == nil, decoded.key == nil,
                  read.fingerprint == nil, decoded.fingerprint == nil, identical(connect, general)
            else {
                Issue.record("\(show(bytes)): read \(read), the general way \(decoded)", sourceLocation: sourceLocation)
                return
            }
        }
    }

    private func show(_ bytes: [UInt8]) -> String {
        bytes.map { $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : "<\(String($0, radix: 16))>" }.joined()
    }
}

/// Equal, and every string the same bytes: stricter than `==`, which compares strings by
/// canonical equivalence.
private func identical(_ a: ConnectRequest, _ b: ConnectRequest) -> Bool {
    func same(_ x: String?, _ y: String?) -> Bool { x.map { Array($0.utf8) } == y.map { Array($0.utf8) } }
    func bytes(_ credentials: ConnectRequest.Credentials) -> [UInt8] {
        switch credentials {
        case .name(let name): [0] + Array(name.utf8)
        case .token(let token): [1] + Array(token.utf8)
        }
    }
    return a == b && same(a.clientVersion, b.clientVersion) && same(a.workspace, b.workspace)
        && bytes(a.credentials) == bytes(b.credentials) && same(a.resume?.secret, b.resume?.secret)
        && same(a.resume?.id.rawValue, b.resume?.id.rawValue) && same(a.ticket, b.ticket)
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
