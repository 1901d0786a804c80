import PanesCore
import PanesCoreTestSupport
import Testing

@Suite struct HubLifecycleTests {
    @Test func visibilityAndFocusDeriveTheActivationState() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        #expect(harness.request(scene, "lifecycle", ["visible": true, "focused": true])["result"]?["state"] == "foregroundActive")
        #expect(harness.request(scene, "lifecycle", ["visible": true, "focused": false])["result"]?["state"] == "foregroundInactive")
        #expect(harness.request(scene, "lifecycle", ["visible": false, "focused": false])["result"]?["state"] == "background")
        #expect(harness.hub.metricsText().contains("panes_scene_events_total{event=\"didEnterBackground\"} 1"))
    }

    @Test func theAppStateIsTheHighestStateOfTheUsersScenes() {
        var harness = HubHarness()
        let (a, _) = harness.connect(["state": ["visible": true, "focused": true]])
        let (b, _) = harness.connect(["state": ["visible": false, "focused": false]])
        #expect(harness.request(b, "listSessions")["result"]?["appState"] == "foregroundActive")
        _ = harness.request(a, "lifecycle", ["visible": false, "focused": false])
        #expect(harness.request(b, "listSessions")["result"]?["appState"] == "background")
        harness.run(.closed(a, abnormal: false))
        harness.run(.closed(b, abnormal: false))
        let (c, _) = harness.connect(name: "bob")
        #expect(harness.request(c, "listSessions")["result"]?["appState"] == "unattached")
    }

    static let paths: [(ActivationState, ActivationState, [LifecycleEvent])] = [
        (ActivationState.unattached, ActivationState.foregroundActive, [LifecycleEvent.willEnterForeground, .didBecomeActive]),
        (.foregroundActive, .background, [.willResignActive, .didEnterBackground]),
        (.background, .foregroundActive, [.willEnterForeground, .didBecomeActive]),
        (.unattached, .background, [.didEnterBackground]),
        (.foregroundInactive, .foregroundInactive, []),
    ]

    @Test(arguments: paths)
    func transitionsNeverSkipForegroundInactive(from: ActivationState, to: ActivationState, events: [LifecycleEvent]) {
        #expect(from.transitions(to: to) == events)
    }

    @Test func aClosedSocketDisconnectsTheSceneButKeepsTheSession() {
        var harness = HubHarness()
        let (scene, result) = harness.connect()
        let effects = harness.run(.closed(scene, abnormal: true))
        // Its liveness alone, as a resume writes it (no longer live; SQLite's narrow row), and
        // not quietly: the close is ordered before what follows it.
        #expect(effects.persisted.contains {
            if case .putSessionLiveness(let s) = $0 {
                s.id.rawValue == result["session"]?["persistentIdentifier"]?.stringValue && s.liveSince == nil
            } else { false }
        })
        #expect(!effects.persisted.contains { if case .putSession = $0 { true } else { false } })
        #expect(effects.contains { if case .persist(let commands) = $0 { commands.count == 1 } else { false } })
        let (other, _) = harness.connect()
        let sessions = harness.request(other, "listSessions")["result"]?["sessions"]?.arrayValue ?? []
        #expect(sessions.count == 2)
        #expect(sessions.contains { $0["state"] == "disconnected" })
    }
}
