import PanesCore
import PanesCoreTestSupport
import Testing

/// Promises that held only by luck before: replies before closes, sessions live at a crash,
/// every frame rate-limited, exact deadlines, traits that change after connect.
@Suite struct HubHardeningTests {
    @Test func destroyingOnesOwnSessionRepliesBeforeTheDestroyedEventAndTheClose() {
        var harness = HubHarness()
        let (scene, result) = harness.connect()
        let effects = harness.send(scene, "requestDestruction", ["session": result["session"]!["persistentIdentifier"]!])
        let order = effects.compactMap { effect -> String? in
            switch effect {
            case .persist: "persist"
            case .send(let message, let to) where to == scene: message.json["type"]?.stringValue
            case .close(let to, _, _) where to == scene: "close"
            default: nil
            }
        }
        #expect(order == ["persist", "reply", "sessionDestroyed", "close"])
    }

    @Test func aSessionLiveWhenTheServerWasKilledIsNotSweptAsIdleAfterTheRestart() throws {
        var settings = Settings()
        settings.sessionMaxIdleMs = 3_600_000
        var harness = HubHarness(settings: settings)
        let (_, result) = harness.connect()
        let id = SessionID(result["session"]!["persistentIdentifier"]!.stringValue!)
        #expect(try harness.store.loadState().sessions.first { $0.id == id }?.liveSince != nil, "recorded at connect")
        // Killed with the scene connected; restarted two hours later.
        harness.clock.advance(7_200_000)
        var restarted = try harness.restarted()
        let started = restarted.hub.start()
        #expect(started.persisted.contains { if case .putSession(let s) = $0 { s.id == id && s.liveSince == nil } else { false } })
        restarted.clock.advance(60_000)
        let swept = restarted.run(.tick)
        #expect(!swept.persisted.contains(.deleteSession(id)), "counted as active until the restart")
        restarted.clock.advance(3_600_000)
        #expect(restarted.run(.tick).persisted.contains(.deleteSession(id)), "idle from the restart on")
    }

    @Test func undecodableFramesCountAgainstTheRateLimit() {
        var settings = Settings()
        settings.rateLimitPerSecond = 5
        settings.rateLimitBurst = 5
        var harness = HubHarness(settings: settings)
        let (scene, _) = harness.connect()
        var codes: [String] = []
        for _ in 0..<10 {
            let reply = harness.run(.unreadable(scene, reason: "garbage")).messages(to: scene).last
            codes.append(reply?["error"]?["code"]?.stringValue ?? "?")
        }
        #expect(codes.filter { $0 == "rate_limited" }.count >= 5, "\(codes)")
        #expect(harness.request(scene, "ping")["error"]?["code"] == "rate_limited")
    }

    @Test func framesTooDeepOrWithNumbersOutOfRangeGetTheirOwnCodes() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let deep = harness.run(.refused(scene, PanesError(.nestingTooDeep, "too deep"))).messages(to: scene).last
        #expect(deep?["error"]?["code"] == "nesting_too_deep")
        #expect(deep?["error"]?["number"] == 1017)
    }

    @Test func theHubSaysWhenItNextHasWorkAndNothingIsDoneBefore() {
        var settings = Settings()
        settings.connectTimeoutMs = 5_000
        var harness = HubHarness(settings: settings)
        #expect(harness.hub.nextDeadline == nil, "an empty server sleeps")
        let waiting = harness.open()
        let opened = harness.clock.now
        #expect(harness.hub.nextDeadline == opened + 5_000)
        harness.clock.advance(4_999)
        #expect(harness.run(.tick).closes(waiting).isEmpty)
        harness.clock.advance(1)
        #expect(harness.run(.tick).closes(waiting) == [.connectTimeout], "exactly at the deadline")
    }

    @Test func traitsThatChangeAfterConnectAreKeptAndTheSwitcherHears() {
        var harness = HubHarness()
        let (scene, result) = harness.connect(["traits": ["width": "regular", "pointer": "fine"]])
        #expect(result["traits"]?["width"] == "regular")
        let (watcher, _) = harness.connect()
        _ = harness.request(watcher, "listSessions", ["watch": true])
        let effects = harness.send(scene, "updateTraits", ["traits": ["width": "compact"]])
        let reply = effects.messages(to: scene).last
        #expect(reply?["result"]?["traits"] == ["width": "compact", "pointer": "fine"])
        #expect(reply?["result"]?["changed"] == true)
        let heard = effects.events(to: watcher, named: "sessionsChanged").last?["sessions"]?.arrayValue ?? []
        let entry = heard.first { $0["scene"] == result["scene"] }
        #expect(entry?["traits"] == ["width": "compact", "pointer": "fine"], "the switcher sees the new traits")
        let bad = harness.request(scene, "updateTraits", ["traits": ["width": "huge"]])
        #expect(bad["error"]?["field"] == "traits.width")
    }
}
