import PanesCore
import PanesCoreTestSupport
import Testing

@Suite struct HubRestorationTests {
    /// Connects, saves an activity, disconnects; returns the resume credentials.
    func sessionWithActivity(_ harness: inout HubHarness) -> JSONValue {
        let (scene, result) = harness.connect()
        _ = harness.request(scene, "updateActivity", ["activity": ["activityType": "panes.document", "title": "Draft"]])
        harness.run(.closed(scene, abnormal: false))
        return HubHarness.credentials(result)
    }

    @Test func restorationOlderThanTheMaximumAgeIsNotHandedBack() {
        var harness = HubHarness()
        let credentials = sessionWithActivity(&harness)
        harness.clock.advance(Millis(Settings().restorationMaxAgeMs) + 1)
        let (_, result) = harness.connect(["session": credentials])
        #expect(result["restoration"]?["status"] == "stale")
        #expect(result["session"]?["stateRestorationActivity"] == .null)
    }

    @Test func repeatedCrashesSoonAfterRestoringGiveACleanStart() {
        var harness = HubHarness()
        let credentials = sessionWithActivity(&harness)
        for _ in 0..<Settings().cleanStartThreshold {
            let (scene, result) = harness.connect(["session": credentials])
            #expect(result["restoration"]?["status"] == "restored")
            harness.clock.advance(100)
            harness.run(.closed(scene, abnormal: true))
        }
        let (scene, result) = harness.connect(["session": credentials])
        #expect(result["restoration"]?["status"] == "cleanStart")
        #expect(result["session"]?["stateRestorationActivity"] == .null)
        harness.run(.closed(scene, abnormal: false))
        let (_, again) = harness.connect(["session": credentials])
        #expect(again["restoration"]?["status"] == "none")
    }

    @Test func aSceneThatLivesPastTheWindowResetsTheCrashCount() {
        var harness = HubHarness()
        let credentials = sessionWithActivity(&harness)
        for round in 0..<(Settings().cleanStartThreshold * 2) {
            let (scene, result) = harness.connect(["session": credentials])
            #expect(result["restoration"]?["status"] == "restored", "round \(round)")
            // Every other scene survives the window, so the crashes are never in a row.
            harness.clock.advance(round % 2 == 0 ? 100 : Millis(Settings().cleanStartWindowMs) + 1)
            harness.run(.closed(scene, abnormal: true))
        }
    }

    @Test func normalDisconnectsSoonAfterRestoringDoNotCount() {
        var harness = HubHarness()
        let credentials = sessionWithActivity(&harness)
        for _ in 0..<(Settings().cleanStartThreshold + 1) {
            let (scene, result) = harness.connect(["session": credentials])
            #expect(result["restoration"]?["status"] == "restored")
            harness.run(.closed(scene, abnormal: false))
        }
    }

    @Test func clearingTheActivityRemovesTheRestoration() {
        var harness = HubHarness()
        let (scene, result) = harness.connect()
        _ = harness.request(scene, "updateActivity", ["activity": ["activityType": "panes.document"]])
        #expect(harness.request(scene, "updateActivity", ["activity": .null])["ok"] == true)
        harness.run(.closed(scene, abnormal: false))
        let (_, resumed) = harness.connect(["session": HubHarness.credentials(result)])
        #expect(resumed["restoration"]?["status"] == "none")
    }
}
