import PanesCore
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
