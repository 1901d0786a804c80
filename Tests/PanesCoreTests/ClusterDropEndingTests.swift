@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A drop in a cluster is answered once its ending is in the store (`Hub+ClusterDrags.swift`,
/// `dragEndCommitted`). What it was dropped by, or onto, may be gone by then: the drop stands
/// all the same, is delivered, and is answered with a result its `idempotencyKey` records, so
/// the reloaded window's retry learns what happened instead of an error for an applied drop.
@Suite struct ClusterDropEndingTests {
    static let item: JSONValue = ["activity": ["activityType": "panes.document", "title": "Notes",
                                               "targetContentIdentifier": "doc_notes"], "operations": ["copy", "move"]]

    /// The source and a second window (which retries: a resume of the dropper's session would
    /// complete the held commit with its claim) on node a, a drag begun by the source, and node
    /// b told of it all.
    static func setUp(_ nodes: inout TwoNodes) -> (source: ConnectionID, retrier: ConnectionID, drag: JSONValue) {
        let (source, _) = nodes.a.connect()
        let (retrier, _) = nodes.a.connect()
        let drag = nodes.a.request(source, "beginDrag", ["items": [item]])["result"]?["drag"] ?? .null
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        return (source, retrier, drag)
    }

    static func reply(_ effects: [Effect], to connection: ConnectionID) -> JSONValue? {
        effects.messages(to: connection).last { $0["type"] == "reply" }
    }

    static func recordsTheKey(_ effects: [Effect]) -> Bool {
        recordsTheKey(effects.persisted)
    }

    static func recordsTheKey(_ commands: [StoreCommand]) -> Bool {
        commands.contains {
            switch $0 {
            case .coordination(.recordKeyedRequest), .coordination(.recordHeldRequest): true
            default: false
            }
        }
    }

    /// A drop onto the dropping window itself; the window closes before the drop's commit comes
    /// back. The drop is in the store: its answer is the items, recorded under its key, and a
    /// retry from another window (before or after the commit, here or through another node)
    /// gets them. The source hears once that its drag was dropped onto the dropper.
    @Test(arguments: [false, true])
    func aDropOntoItselfWhoseWindowClosedBeforeItsCommitGivesItsItemsToTheRetry(retryBeforeCommit: Bool) {
        var nodes = TwoNodes()
        let (source, retrier, drag) = Self.setUp(&nodes)
        let (dropper, dropperResult) = nodes.a.connect()
        let drop: JSONObject = ["drag": drag, "target": "scene", "operation": "move", "idempotencyKey": "drop-1"]
        nodes.a.completesCommits = false
        nodes.a.send(dropper, "drop", drop)
        #expect(nodes.a.pendingCommits.count == 1, "the drop waits for its commit")
        #expect(nodes.a.pendingCommits.first.map { Self.recordsTheKey($0.commands) } == true,
                "its answer, the items, is recorded in the commit that ends the drag")
        nodes.a.run(.closed(dropper, abnormal: true))
        var retried: [Effect] = []
        if retryBeforeCommit {
            retried = nodes.a.send(retrier, "drop", drop)
            #expect(retried.messages(to: retrier).isEmpty, "it waits for the first attempt")
        }
        let committed = nodes.a.completeCommits()
        #expect(!Self.recordsTheKey(committed.persisted), "recorded once, in the commit, though its window is gone")
        nodes.a.completesCommits = true
        if !retryBeforeCommit { retried = nodes.a.send(retrier, "drop", drop) }
        let reply = Self.reply(committed + retried, to: retrier)
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["items"]?.arrayValue?.first?["title"] == "Notes")
        #expect(reply?["result"]?["operation"] == "move")
        #expect(nodes.a.request(retrier, "drop", drop)["result"] == reply?["result"], "every retry")
        // Through another node: the store's record answers it.
        let (onB, _) = nodes.b.connect()
        #expect(nodes.b.request(onB, "drop", drop)["result"] == reply?["result"])
        // The source hears once, of a drop onto the window that dropped it.
        let ended = nodes.a.effects.events(to: source, named: "dragEnded")
        #expect(ended.count == 1, "\(ended)")
        #expect(ended.first?["outcome"] == "dropped")
        #expect(ended.first?["target"]?["scene"] == dropperResult["scene"])
        #expect(ended.first?["target"]?["session"] == dropperResult["session"]?["persistentIdentifier"])
    }

    /// A drop onto the dropping window itself whose node dies (SIGKILL) right after the store
    /// took the drag's ending: nothing the node would write after that commit reaches the store.
    /// The retry from the reloaded window through another node, once the dead node's
    /// reservation of the key has lapsed, gets the items: the key's record is in the commit.
    @Test func aDropOntoItselfWhoseNodeDiesRightAfterItsCommitGivesItsItemsToTheRetryThroughAnotherNode() {
        var nodes = TwoNodes()
        let (_, _, drag) = Self.setUp(&nodes)
        let (dropper, _) = nodes.a.connect()
        let drop: JSONObject = ["drag": drag, "target": "scene", "operation": "move", "idempotencyKey": "drop-4"]
        nodes.a.completesCommits = false
        nodes.a.send(dropper, "drop", drop)
        // a dies once the commit is in: its later persists never reach the store, and its
        // answer never leaves.
        nodes.a.holdsPersists = true
        let unsent = Self.reply(nodes.a.completeCommits(), to: dropper)
        #expect(unsent?["result"]?["items"]?.arrayValue?.first?["title"] == "Notes")
        nodes.b.clock.advance(Millis(nodes.b.hub.settings.nodeLeaseMs) + 1)
        let (onB, _) = nodes.b.connect()
        let retried = nodes.b.request(onB, "drop", drop)
        #expect(retried["ok"] == true, "\(retried)")
        #expect(retried["result"] == unsent?["result"], "the same answer the dead node made")
        #expect(retried["result"]?["operation"] == "move")
    }

    /// A drop onto itself held on node a (its commit slow to come back) while a's reservation of
    /// the key lapses; the retry through node b ends the drag first. a's commit, which records
    /// the same key, is refused for that record, and a answers with it: the same items, not
    /// `drag_already_dropped` for a drop that was applied.
    @Test func aDropWhoseKeyWasRecordedThroughAnotherNodeFirstIsAnsweredWithThatRecord() {
        var nodes = TwoNodes()
        let (_, _, drag) = Self.setUp(&nodes)
        let (dropper, _) = nodes.a.connect()
        let drop: JSONObject = ["drag": drag, "target": "scene", "operation": "copy", "idempotencyKey": "drop-5"]
        nodes.a.completesCommits = false
        nodes.a.send(dropper, "drop", drop)
        nodes.b.clock.advance(Millis(nodes.b.hub.settings.nodeLeaseMs) + 1)
        let (onB, _) = nodes.b.connect()
        let throughB = nodes.b.request(onB, "drop", drop)
        #expect(throughB["result"]?["items"]?.arrayValue?.first?["title"] == "Notes", "\(throughB)")
        let late = Self.reply(nodes.a.completeCommits(), to: dropper)
        #expect(late?["ok"] == true, "\(String(describing: late))")
        #expect(late?["result"] == throughB["result"])
    }

    /// A drop naming another window, on this node or on another; the dropping window closes
    /// before the commit comes back. The named window gets the items once, the retry gets
    /// `{"delivered": scene}`, and the source hears once where they went.
    @Test(arguments: [false, true])
    func aDropOntoAnotherWindowWhoseDropperClosedBeforeItsCommitIsDeliveredOnce(receiverOnB: Bool) {
        var nodes = TwoNodes()
        let (source, retrier, drag) = Self.setUp(&nodes)
        let (receiver, receiverResult) = receiverOnB ? nodes.b.connect() : nodes.a.connect()
        if receiverOnB { TwoNodes.deliver(nodes.b.effects, to: &nodes.a) }
        let scene = receiverResult["scene"] ?? .null
        let (dropper, _) = nodes.a.connect()
        let drop: JSONObject = ["drag": drag, "target": "scene", "scene": scene, "idempotencyKey": "drop-2"]
        nodes.a.completesCommits = false
        nodes.a.send(dropper, "drop", drop)
        nodes.a.run(.closed(dropper, abnormal: true))
        let committed = nodes.a.completeCommits()
        nodes.a.completesCommits = true
        var received = committed.events(to: receiver, named: "itemsDropped")
        if receiverOnB {
            // b delivers, recording the key in the commit that settles the drop, and says so.
            let onB = TwoNodes.deliver(committed, to: &nodes.b)
            received = onB.events(to: receiver, named: "itemsDropped")
            #expect(nodes.b.committed.last.map { Self.recordsTheKey($0.commands) } == true)
            TwoNodes.deliver(onB, to: &nodes.a)
        } else {
            #expect(Self.recordsTheKey(committed))
        }
        #expect(received.count == 1, "\(received)")
        #expect(received.first?["items"]?.arrayValue?.first?["title"] == "Notes")
        let retried = nodes.a.send(retrier, "drop", drop)
        let reply = Self.reply(retried, to: retrier)
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"] == ["delivered": scene])
        let again = receiverOnB ? TwoNodes.deliver(retried, to: &nodes.b) : retried
        #expect(again.events(to: receiver, named: "itemsDropped").isEmpty, "delivered once")
        let ended = nodes.a.effects.events(to: source, named: "dragEnded")
        #expect(ended.count == 1, "\(ended)")
        #expect(ended.first?["target"]?["scene"] == scene)
    }

    /// A drop naming a window of this node that closes before the commit comes back (and the
    /// dropper too, or not): the drag has ended in the store, so the items come back to the
    /// dropper as for a drop onto itself, recorded under the key; never an error that leaves
    /// them with nobody.
    @Test(arguments: [false, true])
    func aDropWhoseNamedWindowClosedBeforeItsCommitGivesTheItemsToTheDropper(dropperCloses: Bool) {
        var nodes = TwoNodes()
        let (source, retrier, drag) = Self.setUp(&nodes)
        let (receiver, receiverResult) = nodes.a.connect()
        let (dropper, dropperResult) = nodes.a.connect()
        let drop: JSONObject = ["drag": drag, "target": "scene", "scene": receiverResult["scene"] ?? .null,
                                "operation": "copy", "idempotencyKey": "drop-3"]
        nodes.a.completesCommits = false
        nodes.a.send(dropper, "drop", drop)
        nodes.a.run(.closed(receiver, abnormal: true))
        if dropperCloses { nodes.a.run(.closed(dropper, abnormal: true)) }
        let committed = nodes.a.completeCommits()
        nodes.a.completesCommits = true
        #expect(Self.recordsTheKey(committed))
        let answered = dropperCloses ? Self.reply(nodes.a.send(retrier, "drop", drop), to: retrier)
                                     : Self.reply(committed, to: dropper)
        #expect(answered?["ok"] == true, "\(String(describing: answered))")
        #expect(answered?["result"]?["items"]?.arrayValue?.first?["title"] == "Notes")
        #expect(answered?["result"]?["operation"] == "copy")
        #expect(nodes.a.request(retrier, "drop", drop)["result"] == answered?["result"], "a retry gets the same")
        let ended = nodes.a.effects.events(to: source, named: "dragEnded")
        #expect(ended.count == 1, "\(ended)")
        #expect(ended.first?["outcome"] == "dropped")
        #expect(ended.first?["target"]?["scene"] == dropperResult["scene"])
    }
}
