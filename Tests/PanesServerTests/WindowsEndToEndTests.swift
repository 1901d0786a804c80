import Foundation
import PanesCore
import PanesJSON
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Windows that make windows, over real sockets.
@Suite struct WindowsEndToEndTests {
    static let event: JSONValue = ["activity": ["activityType": "panes.document", "title": "Standup",
                                                "targetContentIdentifier": "doc_standup"], "operations": ["copy", "move"]]

    @Test(arguments: TestStore.endToEnd) func twoScenesOfOneUserDragBetweenEachOther(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let weekOne = try server.client()
        let weekTwo = try server.client()
        _ = weekOne.connect()
        let two = weekTwo.connect()
        let drag = weekOne.request("beginDrag", ["items": [Self.event]])["result"]!["drag"]!
        let dropped = weekTwo.request("drop", ["drag": drag, "target": "scene", "operation": "move"])
        #expect(dropped["result"]?["items"]?.arrayValue?.first?["title"] == "Standup")
        let ended = weekOne.event("dragEnded")
        #expect(ended?["outcome"] == "dropped")
        #expect(ended?["operation"] == "move")
        #expect(ended?["target"]?["scene"] == two["scene"])
        // The other way round, copying.
        let back = weekTwo.request("beginDrag", ["items": [Self.event]])["result"]!["drag"]!
        #expect(weekOne.request("drop", ["drag": back, "target": "scene", "operation": "copy"])["ok"] == true)
        #expect(weekTwo.event("dragEnded")?["operation"] == "copy")
    }

    @Test(arguments: TestStore.endToEnd) func aDropOnTheNewWindowZoneSpawnsASceneThatReceivesTheItem(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let source = try server.client()
        let zone = try server.client()
        _ = source.connect()
        _ = zone.connect()
        let drag = source.request("beginDrag", ["items": [Self.event]])["result"]!["drag"]!
        let dropped = zone.request("drop", ["drag": drag, "target": "newWindow", "operation": "copy"])
        let window = dropped["result"]?["windows"]?.arrayValue?.first
        #expect(window?["url"]?.stringValue?.contains("ticket=") == true)
        #expect(source.event("dragEnded")?["target"]?["kind"] == "newWindow")

        let third = try server.client()
        let opened = third.connect(["ticket": window!["ticket"]!])
        #expect(opened["session"]?["persistentIdentifier"] == window?["session"])
        #expect(opened["connectionOptions"]?["userActivities"]?.arrayValue?.first?["title"] == "Standup")
        let reuse = try server.client()
        #expect(reuse.request("connect", ["protocol": 1, "auth": ["name": "alice"], "ticket": window!["ticket"]!])["error"]?["code"]
            == "ticket_invalid")
    }

    @Test(arguments: TestStore.endToEnd) func openingContentShownElsewhereBringsThatWindowForward(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let shower = try server.client()
        let showing = shower.connect()
        _ = shower.request("updateActivity", ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_7"]])
        let asker = try server.client()
        _ = asker.connect()
        let reply = asker.request("requestActivation", ["activity": ["activityType": "panes.document", "title": "Seven",
                                                                     "targetContentIdentifier": "doc_7"]])
        #expect(reply["result"]?["action"] == "activated")
        #expect(reply["result"]?["session"] == showing["session"]?["persistentIdentifier"])
        #expect(shower.event("activate")?["activity"]?["title"] == "Seven")
        // New content opens a window instead.
        let fresh = asker.request("requestActivation", ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_8"]])
        #expect(fresh["result"]?["action"] == "open")
    }

    @Test(arguments: TestStore.endToEnd) func aRefreshReachesTheLiveWindowWhoseNextSaveKeepsIt(_ store: TestStore) throws {
        let server = try ServerProcess(store: store)
        let window = try server.client()
        let shown = window.connect()
        let requester = try server.client()
        let asking = requester.connect()
        let session = shown["session"]!["persistentIdentifier"]!
        let activity: JSONValue = ["activityType": "panes.workspace", "title": "Budget", "userInfo": ["note": "for Ada"]]
        let reply = requester.request("requestRefresh", ["session": session, "title": "Budget", "subtitle": "for Ada",
                                                         "snapshot": ["text": "Q3 numbers"], "activity": activity])
        #expect(reply["ok"] == true)

        let event = try #require(window.event("sessionRefreshed"))
        #expect(event["session"] == session)
        #expect(event["title"] == "Budget")
        #expect(event["subtitle"] == "for Ada")
        #expect(event["snapshot"] == ["text": "Q3 numbers"])
        #expect(event["activity"]?["userInfo"] == ["note": "for Ada"])
        #expect(event["requestedBy"] == ["scene": asking["scene"]!, "session": asking["session"]!["persistentIdentifier"]!])
        // The window saves back what it was given, and the switcher keeps the refresh.
        _ = window.request("updateActivity", ["activity": event["activity"]!])
        let listed = requester.request("listSessions")["result"]?["sessions"]?.arrayValue?
            .first { $0["persistentIdentifier"] == session }
        #expect(listed?["title"] == "Budget")
        #expect(listed?["subtitle"] == "for Ada")
    }

    @Test(arguments: DismissalAnimation.allCases)
    func destructionClosesTheWindowWithEachAnimation(_ animation: DismissalAnimation) throws {
        let server = try ServerProcess()
        let compose = try server.client()
        let made = compose.connect()
        let switcher = try server.client()
        _ = switcher.connect()
        _ = switcher.request("listSessions", ["watch": true])
        _ = switcher.request("requestDestruction", ["session": made["session"]!["persistentIdentifier"]!,
                                                    "animation": .string(animation.rawValue)])
        #expect(compose.event("sessionDestroyed")?["animation"] == .string(animation.rawValue))
        #expect(compose.waitForClose() == CloseCode.sessionDestroyed.rawValue)
        #expect(switcher.event("sessionsChanged")?["sessions"]?.arrayValue?.count == 1)
    }

    @Test(arguments: TestStore.endToEnd) func everyDragErrorPathGetsAClearErrorAndTheSourceIsNeverLeftWaiting(_ store: TestStore) throws {
        let server = try ServerProcess(store: store, config: ["settings": ["dragLifetimeMs": 400]])
        let source = try server.client()
        let bob = try server.client()
        let gone = try server.client()
        _ = source.connect()
        _ = bob.connect(name: "bob")
        let goneScene = gone.connect()["scene"]!
        gone.socket.close()
        let copyOnly: JSONValue = ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_x"], "operations": ["copy"]]
        let drag = source.request("beginDrag", ["items": [copyOnly]])["result"]!["drag"]!
        #expect(source.request("drop", ["drag": "drg_unknown", "target": "scene"])["error"]?["code"] == "drag_not_found")
        #expect(source.request("drop", ["drag": drag, "target": "scene", "operation": "move"])["error"]?["code"] == "operation_not_allowed")
        #expect(bob.request("drop", ["drag": drag, "target": "scene"])["error"]?["code"] == "forbidden")
        #expect(source.request("drop", ["drag": drag, "target": "scene", "scene": goneScene])["error"]?["code"] == "scene_not_found")
        // Nobody drops it: it expires and the source hears so.
        let ended = source.event("dragEnded")
        #expect(ended?["outcome"] == "cancelled")
        #expect(ended?["reason"] == "expired")
        #expect(source.request("drop", ["drag": drag, "target": "scene"])["error"]?["code"] == "drag_not_found")
    }
}
