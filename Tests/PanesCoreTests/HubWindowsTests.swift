import PanesCore
import PanesCoreTestSupport
import Testing

@Suite struct HubWindowsTests {
    static let document: JSONValue = ["activityType": "panes.document", "title": "Plan", "targetContentIdentifier": "doc_1"]

    @Test func openingNewContentGivesATicketForANewSession() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let effects = harness.send(scene, "requestActivation", ["activity": Self.document])
        let result = effects.messages(to: scene).last!["result"]!
        #expect(result["action"] == "open")
        #expect(result["created"] == true)
        #expect(result["url"]?.stringValue?.hasPrefix("/?workspace=default&ticket=tkt_") == true)
        guard case .putSession(let made)? = effects.persisted.first else {
            Issue.record("the new session is stored before the reply")
            return
        }
        #expect(made.configuration == "workspace")
        #expect(made.title == "Plan")

        let (_, opened) = harness.connect(["ticket": result["ticket"]!])
        #expect(opened["session"]?["persistentIdentifier"] == result["session"])
        #expect(opened["connectionOptions"]?["userActivities"]?.arrayValue?.first?["targetContentIdentifier"] == "doc_1")
        #expect(opened["restoration"]?["status"] == "superseded")
    }

    @Test func aTicketWorksOnceOnlyForItsUserAndNotAfterItExpires() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let ticket = harness.request(scene, "requestActivation", ["activity": Self.document])["result"]!["ticket"]!
        let foreign = harness.request(harness.open(), "connect", ["protocol": 1, "auth": ["name": "bob"], "ticket": ticket])
        #expect(foreign["error"]?["code"] == "ticket_invalid")
        _ = harness.connect(["ticket": ticket])
        let reused = harness.request(harness.open(), "connect", ["protocol": 1, "auth": ["name": "alice"], "ticket": ticket])
        #expect(reused["error"]?["code"] == "ticket_invalid")

        let late = harness.request(scene, "requestActivation", ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_2"]])
        harness.clock.advance(Millis(Settings().ticketLifetimeMs) + 1)
        let effects = harness.run(.tick)
        #expect(effects.persisted == [.deleteSession(SessionID(late["result"]!["session"]!.stringValue!))],
                "the session made for an unused ticket goes with it")
        let expired = harness.request(harness.open(), "connect", ["protocol": 1, "auth": ["name": "alice"], "ticket": late["result"]!["ticket"]!])
        #expect(expired["error"]?["code"] == "ticket_invalid")
    }

    @Test func contentAlreadyShownBringsItsWindowForward() {
        var harness = HubHarness()
        let (shower, showing) = harness.connect()
        _ = harness.request(shower, "updateActivity", ["activity": Self.document])
        let (asker, _) = harness.connect()
        let effects = harness.send(asker, "requestActivation", ["activity": Self.document])
        #expect(effects.messages(to: asker).last?["result"]?["action"] == "activated")
        #expect(effects.messages(to: asker).last?["result"]?["session"] == showing["session"]?["persistentIdentifier"])
        let activate = effects.events(to: shower, named: "activate").first
        #expect(activate?["activity"]?["targetContentIdentifier"] == "doc_1")
        #expect(effects.persisted.isEmpty, "bringing forward creates nothing")
    }

    @Test func aClosedWindowShowingTheContentIsReopened() {
        var harness = HubHarness()
        let (shower, showing) = harness.connect()
        _ = harness.request(shower, "updateActivity", ["activity": Self.document])
        harness.run(.closed(shower, abnormal: false))
        let (asker, _) = harness.connect()
        let result = harness.request(asker, "requestActivation", ["activity": Self.document])["result"]!
        #expect(result["action"] == "open")
        #expect(result["created"] == false)
        #expect(result["session"] == showing["session"]?["persistentIdentifier"])
    }

    @Test func anActivityNoConfigurationAcceptsIsRefused() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let before = harness.effects.persisted.count
        let reply = harness.request(scene, "requestActivation", ["activity": ["activityType": "com.example.game"]])
        #expect(reply["error"]?["code"] == "unsupported_activity")
        #expect(harness.effects.persisted.count == before)
    }

    @Test func dedicatedActivitiesGetTheDedicatedConfiguration() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let ticket = harness.request(scene, "requestActivation", ["activity": ["activityType": "panes.document.dedicated",
                                                                               "targetContentIdentifier": "doc_9"]])["result"]!["ticket"]!
        let (_, opened) = harness.connect(["ticket": ticket])
        #expect(opened["session"]?["configuration"] == "document")
    }

    @Test func refreshUpdatesTheSwitcherEntryOfALiveOrClosedSession() {
        var harness = HubHarness()
        let (other, result) = harness.connect()
        harness.run(.closed(other, abnormal: false))
        let (scene, _) = harness.connect()
        _ = harness.request(scene, "listSessions", ["watch": true])
        let effects = harness.send(scene, "requestRefresh", ["session": result["session"]!["persistentIdentifier"]!,
                                                             "title": "Budget", "snapshot": ["text": "Q3 numbers"]])
        let entry = effects.messages(to: scene).last?["result"]?["session"]
        #expect(entry?["title"] == "Budget")
        #expect(entry?["snapshot"] == ["text": "Q3 numbers"])
        #expect(effects.events(to: scene, named: "sessionsChanged").isEmpty == false)
        let badSnapshot = harness.request(scene, "requestRefresh", ["session": result["session"]!["persistentIdentifier"]!,
                                                                    "snapshot": ["image": "http://example.com/x.png"]])
        #expect(badSnapshot["error"]?["field"] == "snapshot")
    }
}

@Suite struct HubDragTests {
    static let item: JSONValue = ["activity": ["activityType": "panes.document", "title": "Event",
                                               "targetContentIdentifier": "doc_1"], "operations": ["copy", "move"]]

    @Test func droppingOntoAnotherSceneDeliversTheItemsAndTellsTheSource() {
        var harness = HubHarness()
        let (source, _) = harness.connect()
        let (target, targetResult) = harness.connect()
        let drag = harness.request(source, "beginDrag", ["items": [Self.item]])["result"]!["drag"]!
        let effects = harness.send(target, "drop", ["drag": drag, "target": "scene", "operation": "move"])
        let reply = effects.messages(to: target).last!["result"]!
        #expect(reply["operation"] == "move")
        #expect(reply["items"]?.arrayValue?.first?["title"] == "Event")
        let ended = effects.events(to: source, named: "dragEnded").first
        #expect(ended?["outcome"] == "dropped")
        #expect(ended?["operation"] == "move")
        #expect(ended?["target"]?["scene"] == targetResult["scene"])
    }

    @Test func aDropCanNameAnotherSceneOfTheSameUser() {
        var harness = HubHarness()
        let (source, _) = harness.connect()
        let (dropper, _) = harness.connect()
        let (receiver, receiverResult) = harness.connect()
        let drag = harness.request(source, "beginDrag", ["items": [Self.item]])["result"]!["drag"]!
        let effects = harness.send(dropper, "drop", ["drag": drag, "target": "scene", "scene": receiverResult["scene"]!])
        #expect(effects.messages(to: dropper).last?["result"]?["delivered"] == receiverResult["scene"])
        #expect(effects.events(to: receiver, named: "itemsDropped").first?["items"]?.arrayValue?.count == 1)
    }

    @Test func droppingOnTheNewWindowZoneOpensAWindowPerItem() {
        var harness = HubHarness()
        let (source, _) = harness.connect()
        let second: JSONValue = ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_2"]]
        let drag = harness.request(source, "beginDrag", ["items": [Self.item, second]])["result"]!["drag"]!
        let effects = harness.send(source, "drop", ["drag": drag, "target": "newWindow"])
        let windows = effects.messages(to: source).last?["result"]?["windows"]?.arrayValue ?? []
        #expect(windows.count == 2)
        #expect(effects.events(to: source, named: "dragEnded").first?["target"]?["kind"] == "newWindow")
        let (_, opened) = harness.connect(["ticket": windows[1]["ticket"]!])
        #expect(opened["connectionOptions"]?["userActivities"]?.arrayValue?.first?["targetContentIdentifier"] == "doc_2")
    }

    /// A drop onto the new-window zone with room for fewer windows than it has items
    /// (`maxSessionsPerUser`) is refused before any window is made: an error leaves nothing
    /// applied, and the drag can still be dropped.
    @Test func aDropWithoutRoomForAWindowPerItemMakesNoWindow() throws {
        var settings = Settings()
        settings.maxSessionsPerUser = 2
        var harness = HubHarness(settings: settings)
        let (source, _) = harness.connect()
        let second: JSONValue = ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_2"]]
        let drag = harness.request(source, "beginDrag", ["items": [Self.item, second]])["result"]!["drag"]!
        let refused = harness.request(source, "drop", ["drag": drag, "target": "newWindow"])
        #expect(refused.errorCode == "too_many", "\(refused)")
        #expect(try harness.store.loadState().sessions.count == 1, "only the source's session")
        #expect(harness.request(source, "drop", ["drag": drag, "target": "scene"])["ok"] == true)
    }

    @Test func aDragIsDroppedAtMostOnce() {
        var harness = HubHarness()
        let (source, _) = harness.connect()
        let drag = harness.request(source, "beginDrag", ["items": [Self.item]])["result"]!["drag"]!
        _ = harness.request(source, "drop", ["drag": drag, "target": "scene"])
        #expect(harness.request(source, "drop", ["drag": drag, "target": "scene"])["error"]?["code"] == "drag_already_dropped")
    }

    @Test func anExpiredDragIsCancelledAndItsSourceIsTold() {
        var harness = HubHarness()
        let (source, _) = harness.connect()
        let drag = harness.request(source, "beginDrag", ["items": [Self.item]])["result"]!["drag"]!
        harness.clock.advance(Millis(Settings().dragLifetimeMs))
        let effects = harness.run(.tick)
        let ended = effects.events(to: source, named: "dragEnded").first
        #expect(ended?["outcome"] == "cancelled")
        #expect(ended?["reason"] == "expired")
        #expect(harness.request(source, "drop", ["drag": drag, "target": "scene"])["error"]?["code"] == "drag_not_found")
    }

    @Test func cancellingTellsTheSourceAndEndsTheDrag() {
        var harness = HubHarness()
        let (source, _) = harness.connect()
        let drag = harness.request(source, "beginDrag", ["items": [Self.item]])["result"]!["drag"]!
        let effects = harness.send(source, "cancelDrag", ["drag": drag])
        #expect(effects.events(to: source, named: "dragEnded").first?["outcome"] == "cancelled")
        #expect(harness.request(source, "drop", ["drag": drag, "target": "scene"])["error"]?["code"] == "drag_already_dropped")
    }

    @Test func badDropsAreRefusedAndNothingChanges() {
        var harness = HubHarness()
        let (source, _) = harness.connect()
        let (bob, _) = harness.connect(name: "bob")
        let copyOnly: JSONValue = ["activity": ["activityType": "panes.note"], "operations": ["copy"]]
        let drag = harness.request(source, "beginDrag", ["items": [Self.item, copyOnly]])["result"]!["drag"]!
        #expect(harness.request(source, "drop", ["drag": "drg_nope", "target": "scene"])["error"]?["code"] == "drag_not_found")
        let move = harness.request(source, "drop", ["drag": drag, "target": "scene", "operation": "move"])
        #expect(move["error"]?["code"] == "operation_not_allowed")
        #expect(move["error"]?["message"]?.stringValue?.contains("item 1") == true)
        #expect(harness.request(bob, "drop", ["drag": drag, "target": "scene"])["error"]?["code"] == "forbidden")
        #expect(harness.request(source, "drop", ["drag": drag, "target": "scene", "scene": "scn_gone"])["error"]?["code"] == "scene_not_found")
        let unsupported = harness.request(source, "drop", ["drag": drag, "target": "newWindow"])
        #expect(unsupported["error"]?["code"] == "unsupported_activity")
        let stored = harness.effects.compactMap { effect -> [StoreCommand]? in if case .persist(let c) = effect { c } else { nil } }
        #expect(stored.joined().filter { if case .putSession = $0 { true } else { false } }.count == 2,
                "only the two connects stored sessions")
        // After all that, the drag is still droppable.
        #expect(harness.request(source, "drop", ["drag": drag, "target": "scene"])["ok"] == true)
    }

    @Test func anotherUserMayDropOnlyWorkspaceDocumentsBothCanSee() {
        var harness = HubHarness()
        let (alice, _) = harness.connect(name: "alice")
        let (bob, _) = harness.connect(name: "bob")
        let (stranger, _) = harness.connect(["workspace": "elsewhere"], name: "carol")
        let document = harness.createDocument(alice, title: "Shared")
        let shared: JSONValue = ["activity": ["activityType": "panes.document", "targetContentIdentifier": .string(document)]]
        let drag = harness.request(alice, "beginDrag", ["items": [shared]])["result"]!["drag"]!
        #expect(harness.request(stranger, "drop", ["drag": drag, "target": "scene"])["error"]?["code"] == "forbidden")
        let dropped = harness.request(bob, "drop", ["drag": drag, "target": "scene"])
        #expect(dropped["result"]?["items"]?.arrayValue?.first?["targetContentIdentifier"] == .string(document))

        let missing: JSONValue = ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_none"]]
        let second = harness.request(alice, "beginDrag", ["items": [missing]])["result"]!["drag"]!
        #expect(harness.request(bob, "drop", ["drag": second, "target": "scene"])["error"]?["code"] == "forbidden")
    }

    static let badDrags: [(JSONObject, String, String)] = [
        ([:], "missing_field", "items"),
        (["items": []], "invalid_field", "items"),
        (["items": [["operations": ["copy"]]]], "missing_field", "items[0].activity"),
        (["items": [["activity": ["activityType": "x"], "operations": ["fling"]]]], "invalid_field", "items[0].operations[0]"),
        (["items": [["activity": ["activityType": "x"], "operations": []]]], "invalid_field", "items[0].operations"),
    ]

    @Test(arguments: badDrags)
    func badDragsAreRefusedNamingTheField(_ fields: JSONObject, code: String, field: String) {
        var harness = HubHarness()
        let (source, _) = harness.connect()
        let reply = harness.request(source, "beginDrag", fields)
        #expect(reply["error"]?["code"] == .string(code))
        #expect(reply["error"]?["field"] == .string(field))
    }

    @Test func aDragCarriesAtMostTheItemLimit() {
        var settings = Settings()
        settings.maxDragItems = 2
        var harness = HubHarness(settings: settings)
        let (source, _) = harness.connect()
        let reply = harness.request(source, "beginDrag", ["items": [Self.item, Self.item, Self.item]])
        #expect(reply["error"]?["code"] == "too_many")
    }
}

@Suite struct HubReopeningTests {
    @Test func reopeningAClosedWindowForItsOwnContentRestoresItWhole() {
        var harness = HubHarness()
        let (shower, _) = harness.connect()
        let id = JSONValue.string(harness.createDocument(shower))
        _ = harness.request(shower, "updateActivity", ["activity": ["activityType": "panes.document", "targetContentIdentifier": id,
                                                                    "userInfo": ["scroll": 420, "note": "keep me"]]])
        harness.run(.closed(shower, abnormal: false))
        let (asker, _) = harness.connect()
        let ticket = harness.request(asker, "requestActivation", ["activity": ["activityType": "panes.document",
                                                                               "targetContentIdentifier": id]])["result"]!["ticket"]!
        let (_, reopened) = harness.connect(["ticket": ticket])
        #expect(reopened["restoration"]?["status"] == "restored")
        #expect(reopened["session"]?["stateRestorationActivity"]?["userInfo"] == ["scroll": 420, "note": "keep me"])
        #expect(reopened["connectionOptions"]?["userActivities"] == [])
    }

    @Test func reopeningAClosedWindowForOtherContentHandsThatContentOver() {
        var harness = HubHarness()
        let (shower, showing) = harness.connect()
        _ = harness.request(shower, "updateActivity", ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_1"]])
        harness.run(.closed(shower, abnormal: false))
        let (asker, _) = harness.connect()
        let ticket = harness.request(asker, "requestActivation", [
            "session": showing["session"]!["persistentIdentifier"]!,
            "activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_2"]])["result"]!["ticket"]!
        let (_, reopened) = harness.connect(["ticket": ticket])
        #expect(reopened["restoration"]?["status"] == "superseded")
        #expect(reopened["connectionOptions"]?["userActivities"]?.arrayValue?.first?["targetContentIdentifier"] == "doc_2")
    }
}
