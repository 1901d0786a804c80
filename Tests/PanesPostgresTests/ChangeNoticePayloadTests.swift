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

    @Test func aNoticeTooLargeOrUnreadableBecomesResubscribed() {
        let huge = ChangeNotice.channel(.document(DocumentID(String(repeating: "x", count: 9_000))), version: 1)
        #expect(ChangeNoticePayload.encode([huge]).flatMap(ChangeNoticePayload.decode) == [.resubscribed])
        #expect(ChangeNoticePayload.decode("nonsense") == [.resubscribed])
    }
}
