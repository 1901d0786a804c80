@testable import PanesCore
import PanesJSON
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A `connect` reply is written from its parts (`JSONWriter+ConnectReply`), not from its tree:
/// its bytes must be exactly those of the tree (`message.json`) encoded the ordinary way, with
/// each optional part present and absent, and strings that need escaping, identifiers held as
/// strings and packed (`InlineIdentifier`, written from their bytes), some with a prefix to escape.
@Suite struct JSONWriterConnectReplyTests {
    /// Session, scene and forked-from ids: as strings; the minted forms (packed); packed with
    /// prefixes that JSON escapes.
    static let ids: [(session: String, scene: String, forkedFrom: String)] = [
        ("ses_abc", "scn_1", "ses_old"),
        ("0123456789abcdef0123456789abcdef", "scn_0123456789abcdef01234567", "fedcba98765432100123456789abcdef"),
        ("\"" + String(repeating: "a", count: 30), "a\"\\\u{1}" + String(repeating: "9", count: 24), "\n" + String(repeating: "0", count: 30)),
    ]

    static func reply(restored: Bool, forked: Bool, handedOver: Int, expires: Bool, snapshot: Bool,
                      ids: (session: String, scene: String, forkedFrom: String) = ids[0]) -> ConnectReply {
        let activity = Activity(activityType: "panes.document", title: "Notes \"draft\"",
                                userInfo: ["scroll": 12, "zoom": 1.5, "tabs": ["a", "b\n"]], targetContentIdentifier: "doc_1")
        let metadata = RestorationMetadata(savedAt: 1_700_000_000_000, serverVersion: "1.2", protocolVersion: 1,
                                           clientVersion: "web/3", documentGone: false)
        let session = SceneSession(
            id: SessionID(ids.session), secretHash: .unmatchable, owner: OwnerKey(workspace: "w é", user: "u1"), role: .window,
            configuration: "default", title: "A \\ title", subtitle: "", snapshot: snapshot ? ["text": "hello"] : nil,
            userInfo: ["sidebar": true, "colour": "#fff", "": .null], restoration: Restoration(activity: activity, metadata: metadata),
            createdAt: 1_700_000_000_001, lastActiveAt: 1_700_000_000_002)
        let settings = Settings()
        return ConnectReply(
            scene: SceneID(ids.scene),
            identity: Authenticator.Identity(user: "u1", name: "Ünï \u{1}", role: .editor,
                                             expiresAt: expires ? 1_700_000_100_000 : nil),
            session: session, secret: "s3cret", created: forked, forkedFrom: forked ? SessionID(ids.forkedFrom) : nil,
            handedOver: Array(repeating: activity, count: handedOver), restoration: restored ? .restored : .stale,
            traits: Traits(width: .compact, pointer: .coarse),
            constants: ConnectReply.Constants(settings: settings, serverVersion: "9.9", protocolVersion: 1))
    }

    @Test(arguments: [false, true], [false, true])
    func writtenFromItsPartsIsTheTreesBytes(restored: Bool, forked: Bool) {
        for (handedOver, expires, snapshot) in [(0, false, false), (1, true, true), (2, false, true)] {
            for (id, ids) in [(RequestID.int(7), Self.ids[0]), (.string("r-\"1\""), Self.ids[0]),
                              (.int(8), Self.ids[1]), (.int(9), Self.ids[2])] {
                let message = ServerMessage.connected(
                    id, Self.reply(restored: restored, forked: forked, handedOver: handedOver, expires: expires,
                                   snapshot: snapshot, ids: ids))
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

    /// The statuses, traits and roles are written from constant text, `limits` and `server` from
    /// bytes kept for the first constants encoded, and an empty `userInfo` as `{}`: each case, each
    /// empty and set `userInfo`, and constants that alternate (whichever the process kept, the
    /// others are written anew) must give the tree's bytes.
    @Test func everyStatusTraitRoleAndConstantsIsTheTreesBytes() {
        let statuses: [RestorationStatus] = [.none, .restored, .stale, .incompatible, .superseded, .cleanStart,
                                             .documentGone]
        var other = Settings()
        (other.maxMessageBytes, other.maxUserInfoBytes, other.maxActivityBytes, other.rateLimitPerSecond) = (70_000, 123, 4_567, 89)
        let constants = [
            ConnectReply.Constants(settings: Settings(), serverVersion: "9.9", protocolVersion: 1),
            ConnectReply.Constants(settings: other, serverVersion: "1.0-\u{E9}\"q\"", protocolVersion: 1),
            // Canonically equal to the one before (NFD), not the same bytes.
            ConnectReply.Constants(settings: other, serverVersion: "1.0-e\u{301}\"q\"", protocolVersion: 1),
        ]
        var written = 0
        for (index, status) in statuses.enumerated() {
            for role in Role.allCases {
                for sessionRole in SceneConfiguration.SessionRole.allCases {
                    let base = Self.reply(restored: status == .restored, forked: false, handedOver: 0, expires: true,
                                          snapshot: false)
                    var session = base.session
                    session.role = sessionRole
                    if index % 2 == 0 { session.userInfo = [:] }
                    let traits = Traits(width: Traits.Width.allCases[index % 2], pointer: Traits.Pointer.allCases[(index / 2) % 2])
                    let reply = ConnectReply(
                        scene: base.scene, identity: Authenticator.Identity(user: "u1", name: "n", role: role, expiresAt: nil),
                        session: session, secret: base.secret, created: false, forkedFrom: nil, handedOver: [],
                        restoration: status, traits: traits, constants: constants[written % constants.count])
                    let message = ServerMessage.connected(.int(Int64(written)), reply)
                    #expect(String(decoding: JSONCodec.encode(message, headroom: 0), as: UTF8.self)
                        == String(decoding: JSONCodec.encode(message.json, headroom: 0), as: UTF8.self))
                    written += 1
                }
            }
        }
        #expect(written == statuses.count * Role.allCases.count * SceneConfiguration.SessionRole.allCases.count)
    }

    @Test func theIdentifiersAreHeldAsTheTestMeansThem() {
        #expect(!SessionID(Self.ids[0].session).bytes.isPacked && !SceneID(Self.ids[0].scene).bytes.isPacked)
        for ids in Self.ids[1...] {
            #expect(SessionID(ids.session).bytes.isPacked && SceneID(ids.scene).bytes.isPacked
                && SessionID(ids.forkedFrom).bytes.isPacked)
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
