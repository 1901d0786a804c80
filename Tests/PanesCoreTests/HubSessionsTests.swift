import PanesCore
import Testing

@Suite struct HubSessionsTests {
    @Test func mergingUserInfoKeepsOtherKeysAndNullRemovesOne() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        _ = harness.request(scene, "setUserInfo", ["userInfo": ["a": 1, "b": 2]])
        let merged = harness.request(scene, "setUserInfo", ["userInfo": ["b": .null, "c": 3], "mode": "merge"])
        #expect(merged["result"]?["userInfo"] == ["a": 1, "c": 3])
        let replaced = harness.request(scene, "setUserInfo", ["userInfo": ["z": .null]])
        #expect(replaced["result"]?["userInfo"] == ["z": .null])
    }

    @Test func anOversizeUserInfoIsRefusedAndNothingIsStored() {
        var settings = Settings()
        settings.maxUserInfoBytes = 100
        var harness = HubHarness(settings: settings)
        let (scene, _) = harness.connect()
        _ = harness.request(scene, "setUserInfo", ["userInfo": ["keep": true]])
        let before = harness.effects.persisted.count
        let reply = harness.request(scene, "setUserInfo", ["userInfo": ["big": .string(String(repeating: "x", count: 200))]])
        #expect(reply["error"]?["code"] == "too_large")
        #expect(reply["error"]?["message"]?.stringValue?.contains("maxUserInfoBytes") == true)
        // A merge that grows past the limit is refused too, after decoding passed.
        let merge = harness.request(scene, "setUserInfo", ["userInfo": ["more": .string(String(repeating: "y", count: 80))], "mode": "merge"])
        #expect(merge["error"]?["code"] == "too_large")
        #expect(harness.effects.persisted.count == before)
    }

    @Test func savesAreAcknowledgedOnlyAfterTheirPersist() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let effects = harness.send(scene, "updateActivity", ["activity": ["activityType": "panes.document"]])
        guard case .persist = effects.first, case .send(.reply, _)? = effects.last else {
            Issue.record("expected persist then reply, got \(effects)")
            return
        }
    }

    @Test func theSwitcherListsEverySessionAndWatchersHearOfChanges() {
        var harness = HubHarness()
        let (watcher, _) = harness.connect()
        let list = harness.request(watcher, "listSessions", ["watch": true])
        #expect(list["result"]?["sessions"]?.arrayValue?.count == 1)
        let (other, _) = harness.connect()
        let changes = harness.effects.events(to: watcher, named: "sessionsChanged")
        #expect(changes.last?["sessions"]?.arrayValue?.count == 2)
        // Another user's sessions never show up.
        let (_, _) = harness.connect(name: "bob")
        #expect(harness.request(other, "listSessions")["result"]?["sessions"]?.arrayValue?.count == 2)
    }

    @Test(arguments: DismissalAnimation.allCases)
    func destroyingASessionClosesItsWindowWithTheAnimation(_ animation: DismissalAnimation) {
        var harness = HubHarness()
        let (target, result) = harness.connect()
        let (requester, _) = harness.connect()
        _ = harness.request(requester, "listSessions", ["watch": true])
        let id = result["session"]!["persistentIdentifier"]!
        let effects = harness.send(requester, "requestDestruction", ["session": id, "animation": .string(animation.rawValue)])
        #expect(effects.events(to: target, named: "sessionDestroyed").first?["animation"] == .string(animation.rawValue))
        #expect(effects.closes(target) == [.sessionDestroyed])
        #expect(effects.persisted.contains(.deleteSession(SessionID(id.stringValue!))))
        #expect(effects.events(to: requester, named: "sessionsChanged").last?["sessions"]?.arrayValue?.count == 1)
        // The destroyed session cannot be resumed.
        let resume = harness.request(harness.open(), "connect", ["protocol": 1, "auth": ["name": "alice"],
                                                                 "session": HubHarness.credentials(result)])
        #expect(resume["error"]?["code"] == "session_not_found")
    }

    @Test func anotherUsersSessionCannotBeDestroyed() {
        var harness = HubHarness()
        let (_, result) = harness.connect(name: "bob")
        let (alice, _) = harness.connect()
        let reply = harness.request(alice, "requestDestruction", ["session": result["session"]!["persistentIdentifier"]!])
        #expect(reply["error"]?["code"] == "session_not_found")
    }

    @Test func sessionsIdleLongerThanTheLimitAreDiscarded() {
        var settings = Settings()
        settings.sessionMaxIdleMs = 3_600_000
        var harness = HubHarness(settings: settings)
        let (old, result) = harness.connect()
        harness.run(.closed(old, abnormal: false))
        let (live, _) = harness.connect()
        harness.clock.advance(3_600_001)
        let effects = harness.run(.tick)
        #expect(effects.persisted == [.deleteSession(SessionID(result["session"]!["persistentIdentifier"]!.stringValue!))])
        #expect(harness.request(live, "listSessions")["result"]?["sessions"]?.arrayValue?.count == 1)
    }

    @Test func drainingTellsEverySceneToComeBackLater() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let waiting = harness.open()
        let effects = harness.run(.drain)
        #expect(effects.events(to: scene, named: "goingAway").first?["reconnectAfterMs"] == .int(Int64(Settings().drainReconnectAfterMs)))
        #expect(effects.closes(scene) == [.goingAway])
        #expect(effects.closes(waiting) == [.goingAway])
        harness.run(.closed(scene, abnormal: false))
        harness.run(.closed(waiting, abnormal: false))
        #expect(harness.hub.drained)
    }
}
