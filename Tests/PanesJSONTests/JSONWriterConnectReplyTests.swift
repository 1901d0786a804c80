@testable import PanesCore
import PanesJSON
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A `connect` reply is written from its parts (`JSONWriter+ConnectReply`), not from its tree:
/// its bytes must be exactly those of the tree (`message.json`) encoded the ordinary way, with
/// each optional part present and absent, and strings that need escaping.
@Suite struct JSONWriterConnectReplyTests {
    static func reply(restored: Bool, forked: Bool, handedOver: Int, expires: Bool, snapshot: Bool) -> ConnectReply {
        let activity = Activity(activityType: "panes.document", title: "Notes \"draft\"",
                                userInfo: ["scroll": 12, "zoom": 1.5, "tabs": ["a", "b\n"]], targetContentIdentifier: "doc_1")
        let metadata = RestorationMetadata(savedAt: 1_700_000_000_000, serverVersion: "1.2", protocolVersion: 1,
                                           clientVersion: "web/3", documentGone: false)
        let session = SceneSession(
            id: SessionID("ses_abc"), secretHash: .unmatchable, owner: OwnerKey(workspace: "w é", user: "u1"), role: .window,
            configuration: "default", title: "A \\ title", subtitle: "", snapshot: snapshot ? ["text": "hello"] : nil,
            userInfo: ["sidebar": true, "colour": "#fff", "": .null], restoration: Restoration(activity: activity, metadata: metadata),
            createdAt: 1_700_000_000_001, lastActiveAt: 1_700_000_000_002)
        let settings = Settings()
        return ConnectReply(
            scene: SceneID("scn_1"),
            identity: Authenticator.Identity(user: "u1", name: "Ünï \u{1}", role: .editor,
                                             expiresAt: expires ? 1_700_000_100_000 : nil),
            session: session, secret: "s3cret", created: forked, forkedFrom: forked ? SessionID("ses_old") : nil,
            handedOver: Array(repeating: activity, count: handedOver), restoration: restored ? .restored : .stale,
            traits: Traits(width: .compact, pointer: .coarse),
            constants: ConnectReply.Constants(settings: settings, serverVersion: "9.9", protocolVersion: 1))
    }

    @Test(arguments: [false, true], [false, true])
    func writtenFromItsPartsIsTheTreesBytes(restored: Bool, forked: Bool) {
        for (handedOver, expires, snapshot) in [(0, false, false), (1, true, true), (2, false, true)] {
            for id in [RequestID.int(7), .string("r-\"1\"")] {
                let message = ServerMessage.connected(
                    id, Self.reply(restored: restored, forked: forked, handedOver: handedOver, expires: expires,
                                   snapshot: snapshot))
                let direct = JSONCodec.encode(message, headroom: 4)
                let tree = JSONCodec.encode(message.json, headroom: 4)
                #expect(String(decoding: direct, as: UTF8.self) == String(decoding: tree, as: UTF8.self))  // headroom too
            }
        }
    }

    /// A message handed over for a frame (`encode(_:headroom:handingOverTo:)`) is the bytes
    /// `encode` returns, in memory of at most about twice their size: a `connect` reply in the
    /// writer's own, a short reply in an exact copy (a queue of small frames must not hold a
    /// KiB each).
    @Test func aMessageHandedOverIsItsBytesInMemoryOfAboutItsSize() throws {
        // glibc's `malloc_usable_size`, which Swift's Glibc module does not import.
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
        let symbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size"))
        let usableSize = unsafeBitCast(symbol, to: UsableSize.self)
        let reply = Self.reply(restored: true, forked: true, handedOver: 1, expires: true, snapshot: true)
        let messages: [ServerMessage] = [.connected(.int(1), reply), .reply(.int(2), result: ["ok": true])]
        for message in messages {
            let expected = JSONCodec.encode(message, headroom: 16)
            JSONCodec.encode(message, headroom: 16) { bytes in
                #expect(Array(bytes) == expected)
                #expect(usableSize(bytes.baseAddress) <= 2 * bytes.count + 32, "\(message)")
                bytes.deallocate()
            }
        }
    }

    @Test func itIsAReplyWithTheResult() {
        let reply = Self.reply(restored: true, forked: false, handedOver: 0, expires: true, snapshot: false)
        let message = ServerMessage.connected(.int(3), reply)
        #expect(message.replyTo == .int(3))
        #expect(!message.isEvent)
        #expect(message.result == reply.json)
        #expect(message.json == ServerMessage.reply(.int(3), result: reply.json).json)
        #expect(reply.json["session"]?["stateRestorationActivity"]?["activityType"] == "panes.document")
    }
}
