import PanesCore
import PanesCoreTestSupport
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

    /// A merge drops only the keys the request sets to null; a null stored by a replace stays.
    /// Keys are their bytes, but no userInfo holds two spellings of one text (NFC and NFD): a
    /// merge's spelling replaces the stored one.
    @Test func mergingUserInfoComparesKeysByTheirBytes() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let (nfc, nfd) = ("jos\u{E9}", "jose\u{301}")
        _ = harness.request(scene, "setUserInfo", ["userInfo": [nfc: 1, "z": .null]])
        // The other spelling replaces the stored one (no object holds both: the decoder, which
        // every store reads userInfo with, refuses such an object), so a null for it removes it.
        let removed = harness.request(scene, "setUserInfo", ["userInfo": [nfd: .null], "mode": "merge"])
        #expect(removed["result"]?["userInfo"]?.objectValue == ["z": .null])
        _ = harness.request(scene, "setUserInfo", ["userInfo": [nfc: 1], "mode": "merge"])
        let merged = harness.request(scene, "setUserInfo", ["userInfo": [nfd: 2, "a": 3], "mode": "merge"])
        let userInfo = merged["result"]?["userInfo"]?.objectValue
        #expect(userInfo?.count == 3 && userInfo?[nfc] == nil && userInfo?[nfd] == 2)
        #expect(userInfo?["z"] == .null && userInfo?["a"] == 3)
        let many = JSONObject(uniqueKeysWithValues: (0..<2_000).map { ("k\($0)", JSONValue.int(Int64($0))) })
        let large = harness.request(scene, "setUserInfo", ["userInfo": .object(many), "mode": "merge"])
        #expect(large["result"]?["userInfo"]?.objectValue?.count == 2_003)
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

    @Test func aSubtitleIsSetBySavesAndRefreshesListedAndKeptAcrossRestarts() throws {
        var harness = HubHarness()
        let (watcher, _) = harness.connect()
        _ = harness.request(watcher, "listSessions", ["watch": true])
        let (window, result) = harness.connect()
        let id = result["session"]!["persistentIdentifier"]!
        let entry = { (effects: [Effect]) in
            effects.events(to: watcher, named: "sessionsChanged").last?["sessions"]?.arrayValue?
                .first { $0["persistentIdentifier"] == id }
        }

        let saved = harness.send(window, "updateActivity", ["activity": .null, "subtitle": "Compare with last year"])
        #expect(entry(saved)?["subtitle"] == "Compare with last year")
        // A save that leaves the subtitle out keeps it.
        _ = harness.request(window, "updateActivity", ["activity": ["activityType": "panes.workspace"]])
        let refreshed = harness.send(watcher, "requestRefresh", ["session": id, "subtitle": "Scratch: call Ada"])
        #expect(entry(refreshed)?["subtitle"] == "Scratch: call Ada")
        #expect(harness.request(watcher, "requestRefresh", ["session": id, "subtitle": .string(String(repeating: "x", count: 257))])
            .errorCode == "invalid_field")
        #expect(harness.request(window, "updateActivity", ["activity": .null, "subtitle": 7]).errorCode == "invalid_field")

        harness.run(.closed(window, abnormal: false))
        var restarted = try harness.restarted()
        let (_, resumed) = restarted.connect(["session": HubHarness.credentials(result)])
        #expect(resumed["session"]?["subtitle"] == "Scratch: call Ada")
        let (other, _) = restarted.connect()
        let listed = restarted.request(other, "listSessions")["result"]?["sessions"]?.arrayValue ?? []
        #expect(listed.first { $0["persistentIdentifier"] == id }?["subtitle"] == "Scratch: call Ada")
    }

    @Test func aSaveThatChangesWhatTheSwitcherShowsTellsItsWatchers() {
        var harness = HubHarness()
        let (watcher, _) = harness.connect()
        _ = harness.request(watcher, "listSessions", ["watch": true])
        let (window, _) = harness.connect()
        let first = harness.send(window, "updateActivity", ["activity": ["activityType": "panes.document",
                                                                        "title": "Plan", "targetContentIdentifier": "doc_1"]])
        #expect(first.events(to: watcher, named: "sessionsChanged").count == 1)
        // Same title, other document: the switcher's card changes, so it must hear of it.
        let moved = harness.send(window, "updateActivity", ["activity": ["activityType": "panes.document",
                                                                        "title": "Plan", "targetContentIdentifier": "doc_2"]])
        #expect(moved.events(to: watcher, named: "sessionsChanged").last?["sessions"]?.arrayValue?
            .contains { $0["targetContentIdentifier"] == "doc_2" } == true)
        // A scroll changes nothing the switcher shows.
        let scrolled = harness.send(window, "updateActivity", ["activity": [
            "activityType": "panes.document", "title": "Plan", "targetContentIdentifier": "doc_2", "userInfo": ["scroll": 9],
        ]])
        #expect(scrolled.events(to: watcher, named: "sessionsChanged").isEmpty)
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

    /// A scene with writes whose commits are in flight (one, and one waiting behind it) when
    /// the server drains is told `goingAway` at once and takes no more requests, but is closed
    /// only after their answers: closed at once, it never got them (the transport sends
    /// nothing to a connection it is closing).
    @Test func aSceneWithWritesInFlightGetsTheirAnswersBeforeTheDrainClosesIt() throws {
        var harness = HubHarness()
        let (writer, _) = harness.connect()
        let (idle, _) = harness.connect()
        harness.completesCommits = false
        for size in [20, 21] {
            let sent = harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": .int(Int64(size))])
            #expect(sent.messages(to: writer).isEmpty, "its commit is in flight")
        }
        let drained = harness.run(.drain)
        #expect(drained.events(to: writer, named: "goingAway").count == 1)
        #expect(drained.closes(writer).isEmpty, "not before its answers")
        #expect(drained.closes(idle) == [.goingAway])
        #expect(harness.send(writer, "listSessions").isEmpty, "no more requests")
        harness.completesCommits = true
        let done = harness.completeCommits()
        let replies = done.messages(to: writer).filter { $0["type"] == "reply" }
        #expect(replies.map { $0["ok"] } == [true, true], "\(replies)")
        #expect(done.closes(writer) == [.goingAway])
        let lastReply = try #require(done.lastIndex { effect in
            if case .send(let message, writer) = effect { message.replyTo != nil } else { false }
        })
        let close = try #require(done.firstIndex { if case .close(writer, _, _) = $0 { true } else { false } })
        #expect(lastReply < close, "the answers before the close")
        harness.run(.closed(writer, abnormal: false))
        harness.run(.closed(idle, abnormal: false))
        #expect(harness.hub.drained)
    }
}
