@testable import PanesCore
import Testing

/// A session's client-written parts (`SessionDetails`), kept out of line in a box shared by
/// copies of the record: a change to one copy never shows in another, the box exists only while
/// something is set, and records compare by what they hold, not by where it is kept.
@Suite struct SessionDetailsTests {
    static func session(title: String = "", userInfo: JSONObject = [:]) -> SceneSession {
        SceneSession(id: SessionID("s1"), secretHash: .unmatchable, owner: OwnerKey(workspace: "w", user: "alice"),
                     role: .window, configuration: "Default", title: title, userInfo: userInfo,
                     createdAt: 0, lastActiveAt: 0)
    }

    static let restoration = Restoration(
        activity: Activity(activityType: "panes.document", title: "Plan"),
        metadata: RestorationMetadata(savedAt: 1, serverVersion: "1", protocolVersion: 1, clientVersion: "c",
                                      documentGone: false))

    @Test func aChangeToOneCopyOfARecordDoesNotShowInAnother() {
        let original = Self.session(title: "Plan", userInfo: ["sidebar": .bool(true)])
        var copy = original
        copy.title = "Notes"
        copy.userInfo["colour"] = .string("red")
        copy.restoration = Self.restoration
        #expect(original.title == "Plan")
        #expect(original.userInfo == ["sidebar": .bool(true)])
        #expect(original.restoration == nil)
        #expect(copy.title == "Notes")
        #expect(copy.userInfo == ["sidebar": .bool(true), "colour": .string("red")])
        #expect(copy.restoration == Self.restoration)
        #expect(copy != original)
    }

    @Test func aRecordWithNothingSetHoldsNoBoxAndOneEmptiedAgainDropsIt() {
        var session = Self.session()
        #expect(session.detailsBox == nil)
        session.subtitle = "first line"
        session.snapshot = .object(["text": .string("hi")])
        #expect(session.detailsBox != nil)
        session.subtitle = ""
        #expect(session.detailsBox != nil)
        session.snapshot = nil
        #expect(session.detailsBox == nil)
        #expect(session == Self.session())
    }

    @Test func recordsCompareByWhatTheyHoldWhetherTheirBoxesAreSharedOrNot() {
        var a = Self.session()
        a.title = "Plan"
        let b = Self.session(title: "Plan")
        #expect(a == b)
        #expect(a.detailsBox !== b.detailsBox)
        let shared = a
        #expect(shared.detailsBox === a.detailsBox)
        #expect(shared == a)
    }

    @Test func aRecordPrintedShowsWhatItsBoxHolds() {
        var session = Self.session()
        session.snapshot = .object(["text": .string("the preview")])
        session.userInfo["note"] = .string("own words")
        let printed = "\(session)", debugged = String(reflecting: session)
        #expect(printed.contains("the preview") && printed.contains("own words"))
        #expect(debugged.contains("the preview") && debugged.contains("own words"))
    }

    @Test func aRecordWithItsDetailsOutOfLineIsSmallerThanWithThemInline() {
        // 216 bytes with title, subtitle, snapshot, userInfo and a restoration box inline; 152
        // with `liveSince` an optional rather than a sentinel.
        #expect(MemoryLayout<SceneSession>.stride <= 144)
        var session = Self.session()
        #expect(session.liveSince == nil)
        session.liveSince = 0
        #expect(session.liveSince == 0 && session != Self.session())
        session.liveSince = .max
        #expect(session.liveSince == .max)
        session.liveSince = nil
        #expect(session.liveSince == nil && session == Self.session())
    }
}
