import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// RFC 6455 sections 5 (framing) and 7 (closing), checked frame by frame over a raw socket
/// against the real binary, on both event loops where the loop could matter.
///
/// A request the server always answers (`ping` before `connect` gets a `not_connected`
/// reply carrying the request's `id`) shows that a message arrived whole.
@Suite struct TransportConformanceTests {
    static let loops = ["libev", "poll"]

    // MARK: 5.4 Fragmentation, 5.5 control frames

    @Test(arguments: loops)
    func aMessageInFragmentsArrivesAsOneMessage(_ loop: String) throws {
        let (server, client) = try Self.start(loop)
        let request = Array(#"{"type":"ping","id":7}"#.utf8)
        client.send(frame: WebSocketFrame(.text, Array(request[0..<5]), fin: false))
        client.send(frame: WebSocketFrame(.continuation, Array(request[5..<12]), fin: false))
        client.send(frame: WebSocketFrame(.continuation, Array(request[12...])))
        #expect(Self.reply(to: 7, from: client) != nil)
        withExtendedLifetime(server) {}
    }

    @Test(arguments: loops)
    func aPingBetweenFragmentsIsAnsweredAndTheMessageStillArrives(_ loop: String) throws {
        let (server, client) = try Self.start(loop)
        let request = Array(#"{"type":"ping","id":8}"#.utf8)
        client.send(frame: WebSocketFrame(.text, Array(request[0..<10]), fin: false))
        client.send(frame: WebSocketFrame(.ping, Array("between".utf8)))
        client.send(frame: WebSocketFrame(.continuation, Array(request[10...])))
        #expect(client.nextFrame() == WebSocketFrame(.pong, Array("between".utf8)))
        #expect(Self.reply(to: 8, from: client) != nil)
        withExtendedLifetime(server) {}
    }

    @Test func aPingIsAnsweredWithAPongCarryingTheSamePayload() throws {
        let (server, client) = try Self.start()
        let payload = (0..<125).map { UInt8($0) }
        client.send(frame: WebSocketFrame(.ping, payload))
        #expect(client.nextFrame() == WebSocketFrame(.pong, payload))
        withExtendedLifetime(server) {}
    }

    @Test func anUnsolicitedPongIsIgnored() throws {
        let (server, client) = try Self.start()
        client.send(frame: WebSocketFrame(.pong, Array("unasked".utf8)))
        client.send(frame: .text(#"{"type":"ping","id":9}"#))
        #expect(Self.reply(to: 9, from: client) != nil)
        withExtendedLifetime(server) {}
    }

    @Test func anEmptyTextMessageIsAMessage() throws {
        let (server, client) = try Self.start()
        client.send(frame: .text(""))
        let reply = client.nextFrame()
        #expect(reply.map { String(decoding: $0.payload, as: UTF8.self).contains("malformed_json") } == true)
        withExtendedLifetime(server) {}
    }

    @Test(arguments: [
        ("a fragmented ping", WebSocketFrame(.ping, [1], fin: false)),
        ("a fragmented close", WebSocketFrame(.close, [0x03, 0xE8], fin: false)),
        ("RSV1 without an extension", WebSocketFrame(fin: true, rsv: 0x40, opcode: 1, payload: Array("{}".utf8))),
        ("RSV2", WebSocketFrame(fin: true, rsv: 0x20, opcode: 1, payload: Array("{}".utf8))),
        ("RSV3", WebSocketFrame(fin: true, rsv: 0x10, opcode: 1, payload: Array("{}".utf8))),
        ("a continuation without a start", WebSocketFrame(.continuation, Array("{}".utf8))),
    ])
    func aFrameThatBreaksTheFramingRulesClosesWith1002(_ name: String, _ frame: WebSocketFrame) throws {
        let (server, client) = try Self.start()
        client.send(frame: frame)
        #expect(Self.closeCode(from: client) == 1002, "\(name)")
        withExtendedLifetime(server) {}
    }

    /// lws 4.1 fails these at the length byte by dropping the connection: RFC 6455 §7.1.7 says
    /// a close frame SHOULD precede that, and lws leaves no hook to send one (docs/testing.md,
    /// "RFC 6455 conformance"). What must hold: the connection ends, and nothing else is answered.
    @Test(arguments: [
        WebSocketFrame(.ping, [UInt8](repeating: 1, count: 126)),
        WebSocketFrame(.close, [0x03, 0xE8] + [UInt8](repeating: 0x61, count: 124)),
    ])
    func aControlFrameOver125BytesFailsTheConnection(_ frame: WebSocketFrame) throws {
        let (server, client) = try Self.start()
        client.send(frame: frame)
        client.send(frame: .text(#"{"type":"ping","id":1}"#))
        let frames = client.framesUntilEnd(timeout: 10)
        #expect(client.isFinished)
        #expect(frames.allSatisfy { $0.closeCode == 1002 }, "no pong, no reply: \(frames)")
        withExtendedLifetime(server) {}
    }

    @Test(arguments: [3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] as [UInt8])
    func aReservedOpcodeClosesWith1002(_ opcode: UInt8) throws {
        let (server, client) = try Self.start()
        client.send(frame: WebSocketFrame(opcode: opcode, payload: [1, 2]))
        #expect(Self.closeCode(from: client) == 1002)
        withExtendedLifetime(server) {}
    }

    @Test func aNewMessageBeforeTheLastOneEndedClosesWith1002() throws {
        let (server, client) = try Self.start()
        client.send(frame: WebSocketFrame(.text, Array("{\"ty".utf8), fin: false))
        client.send(frame: .text(#"{"type":"ping","id":1}"#))
        #expect(Self.closeCode(from: client) == 1002)
        withExtendedLifetime(server) {}
    }

    // MARK: 8.1 UTF-8 in text

    @Test(arguments: loops)
    func invalidUTF8InATextFrameClosesWith1007(_ loop: String) throws {
        let (server, client) = try Self.start(loop)
        client.send(frame: WebSocketFrame(.text, Array(#"{"type":"ping","id":1,"x":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8)))
        #expect(Self.closeCode(from: client) == 1007)
        withExtendedLifetime(server) {}
    }

    @Test(arguments: [
        ("a surrogate", [0xED, 0xA0, 0x80]),
        ("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
        ("an overlong slash", [0xE0, 0x80, 0xAF]),
        ("a lone continuation byte", [0x80]),
        ("0xFF", [0xFF]),
    ] as [(String, [UInt8])])
    func invalidUTF8SplitAcrossFragmentsClosesWith1007(_ name: String, _ bad: [UInt8]) throws {
        let (server, client) = try Self.start()
        client.send(frame: WebSocketFrame(.text, Array(#"{"x":""#.utf8) + bad.prefix(1), fin: false))
        client.send(frame: WebSocketFrame(.continuation, Array(bad.dropFirst()) + Array(#""}"#.utf8)))
        #expect(Self.closeCode(from: client) == 1007, "\(name)")
        withExtendedLifetime(server) {}
    }

    @Test func aCharacterSplitAcrossFragmentsIsFine() throws {
        let (server, client) = try Self.start()
        let request = Array(#"{"type":"ping","id":5,"x":"é€😀"}"#.utf8)
        // Cut inside each multi-byte character in turn.
        let cuts = [29, 31, 34, request.count]
        var start = 0
        for (index, cut) in cuts.enumerated() {
            client.send(frame: WebSocketFrame(index == 0 ? .text : .continuation, Array(request[start..<cut]),
                                              fin: cut == request.count))
            start = cut
        }
        #expect(Self.reply(to: 5, from: client) != nil)
        withExtendedLifetime(server) {}
    }

    @Test func aMessageEndingInsideACharacterClosesWith1007() throws {
        let (server, client) = try Self.start()
        client.send(frame: WebSocketFrame(.text, Array("{}".utf8) + [0xE2, 0x82]))
        #expect(Self.closeCode(from: client) == 1007)
        withExtendedLifetime(server) {}
    }

    // MARK: Limits (maxMessageBytes, 1009)

    @Test(arguments: loops)
    func aFrameAnnouncingMoreThanTheLimitClosesWith1009AtItsFirstBytes(_ loop: String) throws {
        let (server, client) = try Self.start(loop)
        // A header announcing 2^40 bytes, then enough payload for lws to hand over its first
        // piece (up to its 2 KiB receive buffer): the close must come now, not after a terabyte.
        let frame = WebSocketFrame(.text, [UInt8](repeating: 0x61, count: 5000))
        client.send(frame: frame, announcedLength: 1 << 40)
        #expect(Self.closeCode(from: client) == 1009)
        withExtendedLifetime(server) {}
    }

    @Test func aFragmentedMessageWhoseTotalPassesTheLimitClosesWith1009() throws {
        let (server, client) = try Self.start(config: ["settings": ["maxMessageBytes": 4096]])
        let piece = [UInt8](repeating: 0x61, count: 3000)
        client.send(frame: WebSocketFrame(.text, piece, fin: false))
        client.send(frame: WebSocketFrame(.continuation, piece, fin: false))
        #expect(Self.closeCode(from: client) == 1009)
        withExtendedLifetime(server) {}
    }

    @Test func aMessageOfExactlyTheLimitIsAccepted() throws {
        let (server, client) = try Self.start(config: ["settings": ["maxMessageBytes": 4096]])
        let head = #"{"type":"ping","id":3,"pad":""#
        let text = head + String(repeating: "x", count: 4096 - head.utf8.count - 2) + #""}"#
        #expect(text.utf8.count == 4096)
        client.send(frame: WebSocketFrame(.text, Array(text.utf8[..<text.utf8.index(text.utf8.startIndex, offsetBy: 2000)]), fin: false))
        client.send(frame: WebSocketFrame(.continuation, Array(text.utf8.dropFirst(2000))))
        #expect(Self.reply(to: 3, from: client) != nil)
        withExtendedLifetime(server) {}
    }

    // MARK: 5.3 Masking

    /// RFC 6455 §5.1 says a server must close on an unmasked client frame. lws 4.1 accepts
    /// them and exposes no mask bit to refuse them with; this test records that behaviour
    /// (docs/testing.md, "RFC 6455 conformance") so a newer lws that refuses them is noticed.
    @Test func unmaskedClientFramesAreAcceptedBecauseLws41ExposesNoMaskBit() throws {
        let (server, client) = try Self.start()
        client.send(frame: .text(#"{"type":"ping","id":4}"#), masked: false)
        #expect(Self.reply(to: 4, from: client) != nil)
        withExtendedLifetime(server) {}
    }

    // MARK: 7 Closing

    @Test(arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999] as [UInt16])
    func aValidCloseCodeIsEchoed(_ code: UInt16) throws {
        let (server, client) = try Self.start()
        client.send(frame: .close(code, "bye"))
        let close = Self.serverClose(from: client)
        #expect(close?.closeCode == code)
        #expect(client.isFinished, "the server ends the TCP connection")
        withExtendedLifetime(server) {}
    }

    @Test(arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535] as [UInt16])
    func anInvalidCloseCodeIsAnsweredWith1002NotEchoed(_ code: UInt16) throws {
        let (server, client) = try Self.start()
        client.send(frame: .close(code, "bye"))
        #expect(Self.serverClose(from: client)?.closeCode == 1002)
        withExtendedLifetime(server) {}
    }

    @Test(arguments: loops)
    func aOneByteClosePayloadIsAnsweredWith1002(_ loop: String) throws {
        let (server, client) = try Self.start(loop)
        client.send(frame: WebSocketFrame(.close, [0x03]))
        #expect(Self.serverClose(from: client)?.closeCode == 1002)
        withExtendedLifetime(server) {}
    }

    @Test(arguments: loops)
    func aCloseReasonThatIsNotUTF8IsAnsweredWith1007(_ loop: String) throws {
        let (server, client) = try Self.start(loop)
        client.send(frame: WebSocketFrame(.close, [0x03, 0xE8, 0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80]))
        #expect(Self.serverClose(from: client)?.closeCode == 1007)
        withExtendedLifetime(server) {}
    }

    @Test func anEmptyCloseIsAnsweredWithAClose() throws {
        let (server, client) = try Self.start()
        client.send(frame: WebSocketFrame(.close))
        let close = Self.serverClose(from: client)
        #expect(close?.kind == .close)
        #expect(close?.closeCode == nil || close?.closeCode == 1000)
        withExtendedLifetime(server) {}
    }

    @Test func aCloseInTheMiddleOfAFragmentedMessageIsAnswered() throws {
        let (server, client) = try Self.start()
        client.send(frame: WebSocketFrame(.text, Array("{\"ty".utf8), fin: false))
        client.send(frame: .close(1000))
        #expect(Self.serverClose(from: client)?.closeCode == 1000)
        withExtendedLifetime(server) {}
    }

    // MARK: Helpers

    static func start(_ loop: String = "libev", config: JSONValue? = nil) throws -> (ServerProcess, WebSocketClient) {
        let loopOption = loop == "libev" ? [] : ["--event-loop", loop] // libev is the default
        let server = try ServerProcess(config: config, extra: ["--store", "memory"] + loopOption)
        var options = WebSocketClient.Options()
        options.answersPeer = false
        return (server, try WebSocketClient(port: server.port, options: options))
    }

    /// The text of the reply to request `id`, skipping other frames; nil if none came.
    static func reply(to id: Int, from client: WebSocketClient) -> String? {
        while let frame = client.nextFrame(timeout: 10) {
            let text = String(decoding: frame.payload, as: UTF8.self)
            if frame.kind == .text && text.contains(#""re":\#(id)"#) { return text }
            if frame.kind == .close { return nil }
        }
        return nil
    }

    /// The server's close frame (answered, so the server can end the connection at once).
    static func serverClose(from client: WebSocketClient) -> WebSocketFrame? {
        while let frame = client.nextFrame(timeout: 10) {
            if frame.kind == .close {
                client.send(frame: WebSocketFrame(.close, Array(frame.payload.prefix(2))))
                _ = client.framesUntilEnd(timeout: 10)
                return frame
            }
        }
        return nil
    }

    static func closeCode(from client: WebSocketClient) -> UInt16? {
        serverClose(from: client)?.closeCode
    }
}
