import PanesCore
import PanesJSON
@testable import PanesPostgres
import Testing

@Suite struct ChangeNoticePayloadTests {
    @Test func noticesRoundTripThroughOnePayload() {
        let notices: [ChangeNotice] = [
            .channel(.preferences(PreferenceDomain(workspace: "acme ☂︎", user: "ada")), version: 7),
            .channel(.preferences(PreferenceDomain(workspace: "acme", user: nil)), version: 1),
            .channel(.document(DocumentID("doc_1")), version: 42),
            .documentEdited(DocumentID("doc_2"), revision: 43, length: 1_204, modifiedAt: 1_763_700_000_000),
            .channel(.coordination(.session(SessionID("s1"))), version: 3),
            .records(cursor: 1_207),
        ]
        let payloads = ChangeNoticePayload.encode(notices)
        #expect(payloads.count == 1)
        #expect(payloads.flatMap(ChangeNoticePayload.decode) == notices)
    }

    /// A node splits its answer's presence (`presenceRetold`) by the core's count of encoded
    /// bytes: a part the core counts at the bound is that many bytes encoded, so it rides in
    /// the payload, not as a stored signal (`ChangeNoticePayload.fitsInline`, which the store
    /// asks; one byte more is stored), and comes out as the same signal.
    @Test func aRetoldPresencePartCountedAtTheBoundGoesInline() {
        let presence: JSONValue = ["document": "doc_1", "scene": "scn_1", "user": "ädä \"q\"", "name": "ada\n",
                                   "selection": ["anchor": 1, "head": 2], "left": false, "revision": 7, "color": .null,
                                   "data": ["note": "x"]]
        var signal = NodeSignal(from: NodeID("n1"), to: NodeID("n2"), kind: .presenceRetold(
            ["retold": .array([]), "part": 0, "parts": 1]))
        var retold: [JSONValue] = []
        while signal.json.encodedSize < NodeSignal.maxInlineBytes {
            var next = presence.objectValue!
            let room = NodeSignal.maxInlineBytes - signal.json.encodedSize - presence.encodedSize - (retold.isEmpty ? 0 : 1)
            next["data"] = ["note": .string(String(repeating: "x", count: max(1, min(room + 1, 200))))]
            retold.append(.object(next))
            signal.kind = .presenceRetold(["retold": .array(retold), "part": 0, "parts": 1])
        }
        if signal.json.encodedSize > NodeSignal.maxInlineBytes {
            // Trim the last note to land on the bound exactly.
            var last = retold.removeLast().objectValue!
            let over = signal.json.encodedSize - NodeSignal.maxInlineBytes
            let note = last["data"]?["note"]?.stringValue ?? ""
            last["data"] = ["note": .string(String(note.dropLast(over)))]
            retold.append(.object(last))
            signal.kind = .presenceRetold(["retold": .array(retold), "part": 0, "parts": 1])
        }
        #expect(signal.json.encodedSize == NodeSignal.maxInlineBytes)
        #expect(JSONCodec.encodeString(signal.json).utf8.count == signal.json.encodedSize)
        #expect(ChangeNoticePayload.maxInlineSignalBytes == NodeSignal.maxInlineBytes)
        // The store's decision (`PostgresStore.item(for:)`): inline at the bound, stored one byte over.
        #expect(ChangeNoticePayload.fitsInline(JSONCodec.encodeString(signal.json)))
        var over = retold
        var last = over.removeLast().objectValue!
        last["data"] = ["note": .string((last["data"]?["note"]?.stringValue ?? "") + "x")]
        over.append(.object(last))
        let larger = NodeSignal(from: signal.from, to: signal.to, kind: .presenceRetold(["retold": .array(over), "part": 0, "parts": 1]))
        #expect(larger.json.encodedSize == NodeSignal.maxInlineBytes + 1)
        #expect(!ChangeNoticePayload.fitsInline(JSONCodec.encodeString(larger.json)))
        let payloads = ChangeNoticePayload.encode([.signal(signal)], origin: ChangeNoticePayload.newOrigin())
        #expect(payloads.count == 1 && payloads[0].utf8.count < 8_000)
        #expect(payloads.flatMap(ChangeNoticePayload.decode) == [.signal(signal)])
    }

    @Test func manyNoticesAreSplitUnderPostgresPayloadLimit() {
        let notices = (0..<2_000).map { ChangeNotice.channel(.document(DocumentID("doc_\($0)")), version: Int64($0)) }
        let payloads = ChangeNoticePayload.encode(notices)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count < 8_000 })
        #expect(payloads.flatMap(ChangeNoticePayload.decode) == notices)
    }

    /// Every payload a store sends starts with its origin, which the decoder ignores: the same
    /// notices come out, and a node of an earlier build reads them as before.
    @Test func everyPayloadStartsWithItsOriginAndDecodesAsWithout() {
        let origin = ChangeNoticePayload.newOrigin()
        #expect(origin.utf8.count == ChangeNoticePayload.originLength)
        let notices = (0..<2_000).map { ChangeNotice.channel(.document(DocumentID("doc_\($0)")), version: Int64($0)) }
            + [.records(cursor: 9), .signal(NodeSignal(from: NodeID("n1"), to: NodeID("n2"), kind: .scenesWanted))]
        let payloads = ChangeNoticePayload.encode(notices, origin: origin)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.hasPrefix(ChangeNoticePayload.originPrefix(origin)) })
        #expect(payloads.allSatisfy { $0.utf8.count <= ChangeNoticePayload.maxBytes })
        #expect(payloads.flatMap(ChangeNoticePayload.decode) == notices)
        #expect(ChangeNoticePayload.encode(items: [.storedSignal(5)], origin: origin).flatMap(ChangeNoticePayload.decodeItems)
                == [.storedSignal(5)])
        // The origin counts towards the limit: a notice that fits with it is sent, one that
        // would fit only without it is sent as "look at everything".
        for (length, fits) in [(ChangeNoticePayload.maxBytes - 45, true), (ChangeNoticePayload.maxBytes - 30, false)] {
            let notice = ChangeNotice.channel(.document(DocumentID(String(repeating: "d", count: length))), version: 1)
            let large = ChangeNoticePayload.encode([notice], origin: origin)
            #expect(large.allSatisfy { $0.utf8.count <= ChangeNoticePayload.maxBytes })
            #expect(large.flatMap(ChangeNoticePayload.decode) == [fits ? notice : .resubscribed])
        }
    }

    /// Only a payload that starts with exactly this origin is the node's own.
    @Test func aPayloadIsOwnOnlyIfItStartsWithTheOrigin() {
        let origin = ChangeNoticePayload.newOrigin()
        let prefix = ChangeNoticePayload.originPrefix(origin).utf8.map { CChar(bitPattern: $0) }
        func isOwn(_ payload: String) -> Bool { payload.withCString { ChangeNoticePayload.hasOrigin($0, prefix: prefix) } }
        let notices: [ChangeNotice] = [.records(cursor: 3)]
        #expect(isOwn(ChangeNoticePayload.encode(notices, origin: origin)[0]))
        #expect(!isOwn(ChangeNoticePayload.encode(notices, origin: ChangeNoticePayload.newOrigin())[0]))
        #expect(!isOwn(ChangeNoticePayload.encode(notices)[0]))
        #expect(!isOwn(String(ChangeNoticePayload.originPrefix(origin).dropLast(2))), "cut short")
        #expect(!isOwn(""))
    }

    @Test func aNoticeTooLargeOrUnreadableBecomesResubscribed() {
        let huge = ChangeNotice.channel(.document(DocumentID(String(repeating: "x", count: 9_000))), version: 1)
        #expect(ChangeNoticePayload.encode([huge]).flatMap(ChangeNoticePayload.decode) == [.resubscribed])
        #expect(ChangeNoticePayload.decode("nonsense") == [.resubscribed])
    }
}
