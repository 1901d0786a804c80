import PanesCore
import PanesCoreTestSupport
import Testing

/// `requestRefresh` reaches a live window (issue 12, 3): the window's scene hears
/// `sessionRefreshed`, so it can take the refresh in instead of overwriting it.
@Suite struct HubRefreshTests {
    static let activity: JSONValue = ["activityType": "panes.document", "title": "Budget",
                                      "targetContentIdentifier": "doc_budget", "userInfo": ["scroll": 12]]

    @Test func theLiveWindowOfARefreshedSessionIsTold() {
        var harness = HubHarness()
        let (window, windowResult) = harness.connect()
        let (requester, requesterResult) = harness.connect()
        let session = windowResult["session"]!["persistentIdentifier"]!
        let effects = harness.send(requester, "requestRefresh", [
            "session": session, "title": "Budget", "subtitle": "Numbers for Ada",
            "snapshot": ["text": "Q3 numbers"], "activity": Self.activity,
        ])
        let events = effects.events(to: window, named: "sessionRefreshed")
        #expect(events == [[
            "type": "sessionRefreshed", "session": session, "title": "Budget", "subtitle": "Numbers for Ada",
            "snapshot": ["text": "Q3 numbers"], "activity": Self.activity,
            "requestedBy": ["scene": requesterResult["scene"]!, "session": requesterResult["session"]!["persistentIdentifier"]!],
        ]])
        // It is held like the reply: sent after the refresh is durable.
        let persistIndex = effects.firstIndex { if case .persist = $0 { true } else { false } }
        let eventIndex = effects.firstIndex { effect in
            if case .send(.event(let event), window) = effect { event.name == "sessionRefreshed" } else { false }
        }
        #expect(persistIndex != nil && eventIndex != nil && persistIndex! < eventIndex!)
    }

    @Test func aRefreshWithoutAnActivityCarriesNone() {
        var harness = HubHarness()
        let (window, windowResult) = harness.connect()
        _ = harness.request(window, "updateActivity", ["activity": Self.activity])
        let (requester, _) = harness.connect()
        let effects = harness.send(requester, "requestRefresh", [
            "session": windowResult["session"]!["persistentIdentifier"]!, "title": "Budget (v2)",
        ])
        let event = effects.events(to: window, named: "sessionRefreshed").first
        #expect(event?["title"] == "Budget (v2)")
        #expect(event?["activity"] == nil, "the activity was not replaced")
    }

    @Test func aWindowRefreshingItsOwnSessionHearsOnlyTheReply() {
        var harness = HubHarness()
        let (window, result) = harness.connect()
        let effects = harness.send(window, "requestRefresh", [
            "session": result["session"]!["persistentIdentifier"]!, "title": "Mine",
        ])
        #expect(effects.events(to: window, named: "sessionRefreshed").isEmpty)
        #expect(effects.messages(to: window).last?["result"]?["session"]?["title"] == "Mine")
    }
}
