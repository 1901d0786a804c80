@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A drop onto the new-window zone in a cluster is held for the dropping window until a window it
/// asked for connects (`Hub+HeldWindows.swift`): if its node dies first, the dropping window gets
/// `openWindows` where its session resumes, and the user ends up with one window per item.
@Suite struct ClusterHeldWindowTests {
    /// Two nodes; the source and the dropping window on a, the drag known to b; a drop onto the
    /// new-window zone sent through a, whose commit is not answered yet.
    struct DropOnNewWindow {
        var nodes: TwoNodes
        let dropper: ConnectionID
        let dropperResult: JSONValue
        let drag: JSONValue
        let dropped: [Effect]

        init(key: String, settings: Settings = Settings()) {
            nodes = TwoNodes(settings: settings)
            let (source, _) = nodes.a.connect()
            (dropper, dropperResult) = nodes.a.connect()
            TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
            let began = nodes.a.send(source, "beginDrag", ["items": [ClusterDropEndingTests.item]])
            TwoNodes.deliver(began, to: &nodes.b)
            drag = ClusterDropEndingTests.reply(began, to: source)?["result"]?["drag"] ?? .null
            nodes.a.completesCommits = false
            dropped = nodes.a.send(dropper, "drop", ["drag": drag, "target": "newWindow", "operation": "copy",
                                                     "idempotencyKey": .string(key)])
        }

        var dropperSession: SessionID { ClusterHeldDropTests.session(dropperResult) }
    }

    /// The `openWindows` events among `messages`, each after `connected`.
    static func openWindows(_ messages: [JSONValue], sourceLocation: SourceLocation = #_sourceLocation) -> [JSONValue] {
        let connected = messages.firstIndex { $0["type"] == "reply" }
        #expect(connected.map { messages[$0]["ok"] } == true, "\(messages)", sourceLocation: sourceLocation)
        let events = messages.indices.filter { messages[$0]["type"] == "openWindows" }
        #expect(events.allSatisfy { $0 > connected ?? .max }, "after connected", sourceLocation: sourceLocation)
        return events.map { messages[$0] }
    }

    /// A new window connecting through `node` with `ticket`; its reply.
    static func openTicket(_ ticket: JSONValue?, through node: inout HubHarness) -> JSONValue {
        let window = node.open()
        return node.request(window, "connect", ["protocol": 1, "auth": ["name": "alice"], "ticket": ticket ?? .null])
    }

    /// The user's sessions made for a window of the drop, as `node` knows them: those with a
    /// restoration activity (the dragged item's; its document does not exist here, so it shows
    /// nothing), which the source and the dropping window have not.
    static func windowsForTheItem(_ node: HubHarness) -> Int {
        node.hub.sessions.sessions(of: OwnerKey(workspace: "default", user: "alice"))
            .filter { $0.restoration?.activity.activityType == "panes.document" }.count
    }

    /// a stores the drag's ending and dies before it answers or makes the window: the dropping
    /// window, resumed through b, gets `openWindows` once; its ticket opens the item, and once
    /// it has, nothing is held and a reload of the dropping window opens nothing more.
    @Test func aNewWindowDropWhoseNodeDiedBeforeItAnsweredIsOpenedWhereTheDropperResumes() throws {
        var drop = DropOnNewWindow(key: "windows-1")
        #expect(drop.dropped.messages(to: drop.dropper).isEmpty, "not answered before its commit")
        #expect(try drop.nodes.a.store.loadHeldDrops(drop.dropperSession, now: 0).isEmpty)
        try ClusterHeldDropTests.commitThenDie(&drop.nodes.a)
        #expect(try drop.nodes.a.store.loadHeldDrops(drop.dropperSession, now: 0).count == 1, "held by the commit")

        let reload = drop.nodes.b.open()
        _ = drop.nodes.b.send(reload, "connect", ClusterLeaseTests.resume(drop.dropperResult))
        _ = drop.nodes.b.run(.notice(.nodesExpired([NodeID("a")])))
        let messages = drop.nodes.b.effects.messages(to: reload)
        let events = Self.openWindows(messages)
        #expect(events.count == 1, "\(messages)")
        #expect(events.first?["drag"] == drop.drag)
        let windows = events.first?["windows"]?.arrayValue ?? []
        #expect(windows.count == 1)
        #expect(try drop.nodes.b.store.loadHeldDrops(drop.dropperSession, now: 0).count == 1, "kept until it opens")

        let opened = Self.openTicket(windows.first?["ticket"], through: &drop.nodes.b)
        #expect(opened["ok"] == true, "\(opened)")
        #expect(opened["result"]?["connectionOptions"]?["userActivities"]?.arrayValue?.first?["title"] == "Notes")
        #expect(try drop.nodes.b.store.loadHeldDrops(drop.dropperSession, now: 0).isEmpty, "forgotten once it opened")
        #expect(Self.windowsForTheItem(drop.nodes.b) == 1)

        _ = drop.nodes.b.run(.closed(reload, abnormal: false))
        let again = drop.nodes.b.open()
        let reloaded = drop.nodes.b.send(again, "connect", ClusterLeaseTests.resume(drop.dropperResult)).messages(to: again)
        #expect(Self.openWindows(reloaded).isEmpty, "\(reloaded)")
    }

    /// a answers the drop (its session made and stored) and dies before the window connects: the
    /// dropping window, resumed through b, gets `openWindows` for that same session, so the user
    /// has one window for the item, not two.
    @Test func aNewWindowDropAnsweredButNeverOpenedReopensTheSameSessionWhereTheDropperResumes() throws {
        var drop = DropOnNewWindow(key: "windows-2")
        let answered = drop.nodes.a.completeCommits()
        let reply = ClusterDropEndingTests.reply(answered, to: drop.dropper)
        let made = reply?["result"]?["windows"]?.arrayValue?.first?["session"]
        #expect(made != nil, "\(String(describing: reply))")
        TwoNodes.deliver(answered, to: &drop.nodes.b)
        #expect(drop.nodes.b.hub.sessions[SessionID(made?.stringValue ?? "")] != nil)

        let messages = ClusterHeldDropTests.resume(drop.dropperResult, through: &drop.nodes.b, from: "a")
        let windows = Self.openWindows(messages).first?["windows"]?.arrayValue ?? []
        #expect(windows.map { $0["session"] } == [made], "\(messages)")
        let opened = Self.openTicket(windows.first?["ticket"], through: &drop.nodes.b)
        #expect(opened["result"]?["session"]?["persistentIdentifier"] == made, "\(opened)")
        #expect(Self.windowsForTheItem(drop.nodes.b) == 1)
        #expect(try drop.nodes.b.store.loadHeldDrops(drop.dropperSession, now: 0).isEmpty)
    }

    /// The window the drop asked for connected (through b, with a's ticket) before a died: the
    /// connect let go of the held drop, and the dropping window resumed through b opens nothing.
    @Test func aNewWindowDropWhoseWindowOpenedIsNotOpenedAgainWhereTheDropperResumes() throws {
        var drop = DropOnNewWindow(key: "windows-3")
        let answered = drop.nodes.a.completeCommits()
        let ticket = ClusterDropEndingTests.reply(answered, to: drop.dropper)?["result"]?["windows"]?.arrayValue?.first?["ticket"]
        TwoNodes.deliver(answered, to: &drop.nodes.b)
        #expect(try drop.nodes.b.store.loadHeldDrops(drop.dropperSession, now: 0).count == 1, "held until it opens")
        let opened = Self.openTicket(ticket, through: &drop.nodes.b)
        #expect(opened["ok"] == true, "\(opened)")
        #expect(try drop.nodes.b.store.loadHeldDrops(drop.dropperSession, now: 0).isEmpty, "its connect let it go")

        let messages = ClusterHeldDropTests.resume(drop.dropperResult, through: &drop.nodes.b, from: "a")
        #expect(Self.openWindows(messages).isEmpty, "\(messages)")
        #expect(Self.windowsForTheItem(drop.nodes.b) == 1)
    }

    /// The held windows can no longer be opened when the dropping window resumes (the user's
    /// sessions are full): the items come back to it as `itemsDropped`, and nothing stays held.
    @Test func heldWindowsThatCannotBeOpenedGiveTheItemsToTheDroppingWindow() throws {
        var settings = Settings()
        settings.maxSessionsPerUser = 3
        var drop = DropOnNewWindow(key: "windows-4", settings: settings)
        try ClusterHeldDropTests.commitThenDie(&drop.nodes.a)
        _ = drop.nodes.b.connect()
        #expect(drop.nodes.b.hub.sessions.count(of: OwnerKey(workspace: "default", user: "alice")) == 3, "full")
        let messages = ClusterHeldDropTests.resume(drop.dropperResult, through: &drop.nodes.b, from: "a")
        #expect(Self.openWindows(messages).isEmpty, "\(messages)")
        let items = messages.filter { $0["type"] == "itemsDropped" }
        #expect(items.count == 1, "\(messages)")
        #expect(items.first?["drag"] == drop.drag)
        #expect(items.first?["items"]?.arrayValue?.first?["title"] == "Notes")
        #expect(items.first?["sessions"] == nil)
        #expect(try drop.nodes.b.store.loadHeldDrops(drop.dropperSession, now: 0).isEmpty)
    }
}
