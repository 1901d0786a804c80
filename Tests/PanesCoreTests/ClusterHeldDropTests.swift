@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A drop settled for a window whose node dies before it sends `itemsDropped`
/// (`Hub+HeldDrops.swift`): the settling commit held the event for the window's session, and
/// the node the window resumes on sends it after `connected`; a node that sent it forgets it.
@Suite struct ClusterHeldDropTests {
    static func session(_ result: JSONValue) -> SessionID {
        SessionID(result["session"]?["persistentIdentifier"]?.stringValue ?? "")
    }

    /// The commits a node made and had not heard back about reach the store, and the node dies:
    /// it never learns they committed.
    static func commitThenDie(_ node: inout HubHarness) throws {
        #expect(!node.pendingCommits.isEmpty)
        for commit in node.pendingCommits {
            #expect(try node.store.apply([.commit(commit)])[commit.id] == .committed)
        }
    }

    /// The window reloads through `node`, which takes its session over from `dead`; returns what
    /// `node` sent it.
    static func resume(_ result: JSONValue, through node: inout HubHarness, from dead: String) -> [JSONValue] {
        let reload = node.open()
        _ = node.send(reload, "connect", ClusterLeaseTests.resume(result))
        _ = node.run(.notice(.nodesExpired([NodeID(dead)])))
        return node.effects.messages(to: reload)
    }

    /// Two nodes; a drag begun on a, dropped through another window of a onto a window on b:
    /// the drop's effects on a (its offer to b), not yet delivered.
    struct DropOntoB {
        var nodes = TwoNodes()
        let target: ConnectionID
        let targetResult: JSONValue
        let drag: JSONValue
        let dropped: [Effect]

        init(key: String) {
            let (source, _) = nodes.a.connect()
            let (dropper, _) = nodes.a.connect()
            TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
            (target, targetResult) = nodes.b.connect()
            TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
            let began = nodes.a.send(source, "beginDrag", ["items": [ClusterDropEndingTests.item]])
            TwoNodes.deliver(began, to: &nodes.b)
            drag = ClusterDropEndingTests.reply(began, to: source)?["result"]?["drag"] ?? .null
            dropped = nodes.a.send(dropper, "drop", ["drag": drag, "target": "scene", "scene": targetResult["scene"] ?? .null,
                                                     "operation": "copy", "idempotencyKey": .string(key)])
        }
    }

    /// The window's node b settles a drop onto its window, and dies before it sends the items:
    /// the window, resumed through a, gets them once, after `connected`, and nothing is held after.
    @Test func aDropSettledByAWindowsNodeThatDiedIsDeliveredWhereTheWindowResumes() throws {
        let drop = DropOntoB(key: "held-1")
        var nodes = drop.nodes
        let (target, targetResult, drag, dropped) = (drop.target, drop.targetResult, drop.drag, drop.dropped)
        nodes.b.completesCommits = false
        let onB = TwoNodes.deliver(dropped, to: &nodes.b)
        #expect(onB.events(to: target, named: "itemsDropped").isEmpty)
        try Self.commitThenDie(&nodes.b)

        let messages = Self.resume(targetResult, through: &nodes.a, from: "b")
        let connected = messages.firstIndex { $0["type"] == "reply" }
        #expect(messages[connected ?? 0]["ok"] == true, "\(messages)")
        let delivered = messages.indices.filter { messages[$0]["type"] == "itemsDropped" }
        #expect(delivered.count == 1, "\(messages)")
        #expect(delivered.allSatisfy { $0 > connected ?? .max }, "after connected")
        #expect(delivered.first.map { messages[$0]["drag"] } == drag)
        #expect(delivered.first.map { messages[$0]["items"]?.arrayValue?.first?["title"] } == "Notes")
        #expect(try nodes.a.store.loadHeldDrops(Self.session(targetResult), now: 0).isEmpty, "released once sent")
    }

    /// A drop onto another window of the dropping node, whose node dies after the drag's ending
    /// is stored and before it delivers: the window, resumed through b, gets the items.
    @Test func aDropOntoAWindowOfTheSameNodeThatDiedIsDeliveredWhereTheWindowResumes() throws {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        let (target, targetResult) = nodes.a.connect()
        let drag = nodes.a.request(source, "beginDrag", ["items": [ClusterDropEndingTests.item]])["result"]?["drag"] ?? .null
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        nodes.a.completesCommits = false
        let dropped = nodes.a.send(source, "drop", ["drag": drag, "target": "scene", "scene": targetResult["scene"] ?? .null,
                                                    "operation": "copy", "idempotencyKey": "held-2"])
        #expect(dropped.events(to: target, named: "itemsDropped").isEmpty)
        try Self.commitThenDie(&nodes.a)

        let messages = Self.resume(targetResult, through: &nodes.b, from: "a")
        let delivered = messages.filter { $0["type"] == "itemsDropped" }
        #expect(messages.first?["type"] == "reply" && messages.first?["ok"] == true, "\(messages)")
        #expect(delivered.count == 1, "\(messages)")
        #expect(delivered.first?["drag"] == drag)
        #expect(try nodes.b.store.loadHeldDrops(Self.session(targetResult), now: 0).isEmpty, "released once sent")
    }

    /// Delivered by a node that lives, on either path: nothing stays held, and a later takeover
    /// of the window's session sends nothing again.
    @Test(arguments: [false, true])
    func aDropItsNodeDeliveredIsNotHeldAfterwards(remote: Bool) throws {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (target, targetResult) = remote ? nodes.b.connect() : nodes.a.connect()
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let began = nodes.a.send(source, "beginDrag", ["items": [ClusterDropEndingTests.item]])
        TwoNodes.deliver(began, to: &nodes.b)
        let drag = ClusterDropEndingTests.reply(began, to: source)?["result"]?["drag"] ?? .null
        let dropped = nodes.a.send(source, "drop", ["drag": drag, "target": "scene", "scene": targetResult["scene"] ?? .null,
                                                    "operation": "copy", "idempotencyKey": "held-3"])
        let received = remote ? TwoNodes.deliver(dropped, to: &nodes.b) : dropped
        #expect(received.events(to: target, named: "itemsDropped").count == 1)
        #expect(nodes.a.store.heldDrops.isEmpty, "\(nodes.a.store.heldDrops)")
        let messages = remote ? Self.resume(targetResult, through: &nodes.a, from: "b")
            : Self.resume(targetResult, through: &nodes.b, from: "a")
        #expect(messages.first?["ok"] == true, "\(messages)")
        #expect(!messages.contains { $0["type"] == "itemsDropped" })
    }

    /// The window's node b settles a drop onto its window, and the window closes while the
    /// settling commit is in flight: the drop stays held, and the window gets it when its session
    /// next attaches on b (no takeover there); a reload after that finds nothing more.
    @Test func aDropWhoseWindowClosedDuringItsSettlingIsDeliveredAtTheSessionsNextAttachOnThatNode() throws {
        let drop = DropOntoB(key: "held-4")
        var nodes = drop.nodes
        let (target, targetResult, drag, dropped) = (drop.target, drop.targetResult, drop.drag, drop.dropped)
        nodes.b.completesCommits = false
        _ = TwoNodes.deliver(dropped, to: &nodes.b)
        _ = nodes.b.run(.closed(target, abnormal: false))
        nodes.b.completeCommits()
        nodes.b.completesCommits = true
        #expect(nodes.b.effects.events(to: target, named: "itemsDropped").isEmpty)
        let session = Self.session(targetResult)
        #expect(try nodes.b.store.loadHeldDrops(session, now: 0).map(\.drag.rawValue) == [drag.stringValue ?? ""],
                "kept held: never sent")

        let reload = nodes.b.open()
        _ = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(targetResult))
        let messages = nodes.b.effects.messages(to: reload)
        let connected = messages.firstIndex { $0["type"] == "reply" }
        #expect(messages[connected ?? 0]["ok"] == true, "\(messages)")
        let delivered = messages.indices.filter { messages[$0]["type"] == "itemsDropped" }
        #expect(delivered.count == 1, "\(messages)")
        #expect(delivered.allSatisfy { $0 > connected ?? .max }, "after connected")
        #expect(delivered.first.map { messages[$0]["drag"] } == drag)
        #expect(try nodes.b.store.loadHeldDrops(session, now: 0).isEmpty, "released once sent")

        _ = nodes.b.run(.closed(reload, abnormal: false))
        let again = nodes.b.open()
        _ = nodes.b.send(again, "connect", ClusterLeaseTests.resume(targetResult))
        #expect(!nodes.b.effects.messages(to: again).contains { $0["type"] == "itemsDropped" })
    }
}
