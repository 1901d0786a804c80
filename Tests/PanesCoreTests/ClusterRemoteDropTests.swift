@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A drop onto a window live on another node (`Hub+RemoteDrops.swift`): that node delivers the
/// items and says so, or says the window is gone, and the node that took the drop answers from
/// what it says; where the items went is settled once in the store, so they reach one window,
/// never none and never two (issue 27).
@Suite struct ClusterRemoteDropTests {
    /// The source and the dropping window on node a, the window dropped onto on node b (which a's
    /// switcher lists), and a drag begun by the source that b has heard of.
    struct Setup {
        var source: ConnectionID
        var dropper: ConnectionID
        var dropperScene: JSONValue
        var target: ConnectionID
        var targetScene: JSONValue
        var drag: JSONValue
    }

    static func setUp(_ nodes: inout TwoNodes) -> Setup {
        let (source, _) = nodes.a.connect()
        let (dropper, dropperResult) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (target, targetResult) = nodes.b.connect()
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        let began = nodes.a.send(source, "beginDrag", ["items": [ClusterDropEndingTests.item]])
        TwoNodes.deliver(began, to: &nodes.b)
        let drag = began.messages(to: source).last { $0["type"] == "reply" }?["result"]?["drag"] ?? .null
        return Setup(source: source, dropper: dropper, dropperScene: dropperResult["scene"] ?? .null, target: target,
                     targetScene: targetResult["scene"] ?? .null, drag: drag)
    }

    static func reply(_ effects: [Effect], to connection: ConnectionID) -> JSONValue? {
        ClusterDropEndingTests.reply(effects, to: connection)
    }

    static func offers(in effects: [Effect]) -> [NodeSignal] {
        effects.compactMap { if case .signal(let signal) = $0, case .dropOffered = signal.kind { signal } else { nil } }
    }

    /// The window on b is there: b delivers the items once and says so; only then is the drop
    /// answered `{"delivered"}` and the source told where they went.
    @Test func aDropOntoAWindowOnAnotherNodeIsAnsweredOnlyOnceThatNodeDeliveredIt() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        let drop: JSONObject = ["drag": setup.drag, "target": "scene", "scene": setup.targetScene, "operation": "move",
                                "idempotencyKey": "remote-1"]
        let dropped = nodes.a.send(setup.dropper, "drop", drop)
        #expect(Self.reply(dropped, to: setup.dropper) == nil, "not answered before b has delivered")
        #expect(dropped.events(to: setup.source, named: "dragEnded").isEmpty, "nor the source told")
        #expect(Self.offers(in: dropped).count == 1)
        let onB = TwoNodes.deliver(dropped, to: &nodes.b)
        let received = onB.events(to: setup.target, named: "itemsDropped")
        #expect(received.count == 1, "\(received)")
        #expect(received.first?["items"]?.arrayValue?.first?["title"] == "Notes")
        #expect(received.first?["operation"] == "move")
        let answered = TwoNodes.deliver(onB, to: &nodes.a)
        let reply = Self.reply(answered, to: setup.dropper)
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"] == ["delivered": setup.targetScene])
        let ended = nodes.a.effects.events(to: setup.source, named: "dragEnded")
        #expect(ended.count == 1, "\(ended)")
        #expect(ended.first?["outcome"] == "dropped")
        #expect(ended.first?["target"]?["scene"] == setup.targetScene)
        // The key's record says what was answered, here and through b.
        let (retrier, _) = nodes.a.connect()
        #expect(nodes.a.request(retrier, "drop", drop)["result"] == ["delivered": setup.targetScene])
        let (onBRetrier, _) = nodes.b.connect()
        #expect(nodes.b.request(onBRetrier, "drop", drop)["result"] == ["delivered": setup.targetScene])
    }

    /// The window on b closed in the same moment (a's switcher still lists it): b delivers
    /// nothing, and the items come back to the dropper, as on one node, settled by b. The
    /// source's `dragEnded` names the dropper, and the key's record says items.
    @Test func aDropOntoAWindowThatClosedOnItsNodeMeanwhileGivesTheItemsToTheDropper() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        nodes.b.run(.closed(setup.target, abnormal: true))  // a does not hear of it in time
        let drop: JSONObject = ["drag": setup.drag, "target": "scene", "scene": setup.targetScene, "operation": "move",
                                "idempotencyKey": "remote-2"]
        let dropped = nodes.a.send(setup.dropper, "drop", drop)
        #expect(Self.reply(dropped, to: setup.dropper) == nil)
        let onB = TwoNodes.deliver(dropped, to: &nodes.b)
        #expect(onB.events(to: setup.target, named: "itemsDropped").isEmpty)
        let answered = TwoNodes.deliver(onB, to: &nodes.a)
        let reply = Self.reply(answered, to: setup.dropper)
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["items"]?.arrayValue?.first?["title"] == "Notes")
        #expect(reply?["result"]?["operation"] == "move")
        #expect(nodes.b.committed.last.map { ClusterDropEndingTests.recordsTheKey($0.commands) } == true,
                "recorded in b's commit that gave the items back")
        #expect(!answered.contains { if case .commit = $0 { true } else { false } }, "a settles nothing again")
        let records = answered.persisted.filter { ClusterDropEndingTests.recordsTheKey([$0]) }
        #expect(records.isEmpty, "and a records nothing after it: \(records)")
        let ended = nodes.a.effects.events(to: setup.source, named: "dragEnded")
        #expect(ended.count == 1, "\(ended)")
        #expect(ended.first?["target"]?["scene"] == setup.dropperScene)
        let (retrier, _) = nodes.a.connect()
        #expect(nodes.a.request(retrier, "drop", drop)["result"] == reply?["result"])
        let (onBRetrier, _) = nodes.b.connect()
        #expect(nodes.b.request(onBRetrier, "drop", drop)["result"] == reply?["result"], "the store's record")
    }

    /// The offer comes to b twice (a repeated signal): the window gets the items once, and the
    /// second offer is answered as the first. Once b has forgotten the offer, a third one finds
    /// the drop settled in the store and delivers nothing either.
    @Test func aRepeatedOfferDeliversTheItemsOnce() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        let dropped = nodes.a.send(setup.dropper, "drop", ["drag": setup.drag, "target": "scene",
                                                           "scene": setup.targetScene])
        let first = TwoNodes.deliver(dropped, to: &nodes.b)
        let second = TwoNodes.deliver(dropped, to: &nodes.b)
        #expect(first.events(to: setup.target, named: "itemsDropped").count == 1)
        #expect(second.events(to: setup.target, named: "itemsDropped").isEmpty, "delivered once")
        #expect(!second.contains { if case .commit = $0 { true } else { false } }, "known here: no second commit")
        let answers = second.compactMap { effect -> JSONValue? in
            if case .signal(let signal) = effect, case .dropReceived(let answer) = signal.kind { answer } else { nil }
        }
        #expect(answers.map { $0["delivered"] } == [true], "answered as the first time")
        nodes.b.clock.advance(Millis(3 * nodes.b.hub.settings.dropConfirmTimeoutMs + nodes.b.hub.settings.nodeLeaseMs))
        nodes.b.run(.tick)
        let third = TwoNodes.deliver(dropped, to: &nodes.b)
        #expect(third.events(to: setup.target, named: "itemsDropped").isEmpty, "the store refuses a second settling")
        // a answers once, from the first answer.
        let answered = TwoNodes.deliver(first + second + third, to: &nodes.a)
        #expect(answered.messages(to: setup.dropper).filter { $0["type"] == "reply" }.count == 1)
        #expect(Self.reply(answered, to: setup.dropper)?["result"] == ["delivered": setup.targetScene])
    }

    /// b never answers within `dropConfirmTimeoutMs`: it died before the offer reached it, or it
    /// delivered and died (or its answer was lost) before a heard. a tries to take the items
    /// back; the store says which happened: the items come back to the dropper, or the drop is
    /// answered `{"delivered"}`. Never both, never neither.
    @Test(arguments: [false, true])
    func aDropWhoseReceivingNodeNeverAnswersIsSettledInTheStore(bDelivered: Bool) {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        let drop: JSONObject = ["drag": setup.drag, "target": "scene", "scene": setup.targetScene, "operation": "copy",
                                "idempotencyKey": "remote-3"]
        let dropped = nodes.a.send(setup.dropper, "drop", drop)
        var delivered: [JSONValue] = []
        if bDelivered {
            // b delivers; its answer and its `dragEnded` never reach a.
            delivered = TwoNodes.deliver(dropped, to: &nodes.b).events(to: setup.target, named: "itemsDropped")
            #expect(delivered.count == 1)
        }
        nodes.a.clock.advance(Millis(nodes.a.hub.settings.dropConfirmTimeoutMs) - 1)
        #expect(Self.reply(nodes.a.run(.tick), to: setup.dropper) == nil, "waits until the bound")
        nodes.a.clock.advance(1)
        let settled = nodes.a.run(.tick)
        let reply = Self.reply(settled, to: setup.dropper)
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        let ended = nodes.a.effects.events(to: setup.source, named: "dragEnded")
        if bDelivered {
            #expect(reply?["result"] == ["delivered": setup.targetScene])
            #expect(ended.isEmpty, "b tells the source (its `dragEnded` is what a missed here), not a as well")
        } else {
            #expect(reply?["result"]?["items"]?.arrayValue?.first?["title"] == "Notes")
            #expect(ended.count == 1, "\(ended)")
            #expect(ended.first?["target"]?["scene"] == setup.dropperScene)
            // b comes back (or was only slow): the offer is too late, and delivers nothing.
            let late = TwoNodes.deliver(dropped, to: &nodes.b)
            #expect(late.events(to: setup.target, named: "itemsDropped").isEmpty)
        }
        // A retry through either node gets what was answered.
        let (onBRetrier, _) = nodes.b.connect()
        #expect(nodes.b.request(onBRetrier, "drop", drop)["result"] == reply?["result"])
    }

    /// b delivered; a, which took the drop, dies before it answers. The drop's key record went
    /// in b's commit: a retry through b, once a's reservation has lapsed, gets `{"delivered"}`,
    /// and the source (on b here) was told by b.
    @Test func aDropDeliveredOnAnotherNodeIsAnsweredToARetryAfterTheDroppingNodeDied() {
        var nodes = TwoNodes()
        let (dropper, _) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        // The target first: b tells a of its user's scenes at once only for the first change.
        let (target, targetResult) = nodes.b.connect()
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        let (source, _) = nodes.b.connect()
        let scene = targetResult["scene"] ?? .null
        let drag = nodes.b.request(source, "beginDrag", ["items": [ClusterDropEndingTests.item]])["result"]?["drag"] ?? .null
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        let drop: JSONObject = ["drag": drag, "target": "scene", "scene": scene, "operation": "move",
                                "idempotencyKey": "remote-4"]
        let dropped = nodes.a.send(dropper, "drop", drop)
        let onB = TwoNodes.deliver(dropped, to: &nodes.b)
        #expect(onB.events(to: target, named: "itemsDropped").count == 1)
        #expect(onB.events(to: source, named: "dragEnded").first?["target"]?["scene"] == scene)
        // a is gone: b's answer never reaches it. The retry, through b.
        nodes.b.clock.advance(Millis(nodes.b.hub.settings.nodeLeaseMs) + 1)
        let (retrier, _) = nodes.b.connect()
        let retried = nodes.b.request(retrier, "drop", drop)
        #expect(retried["ok"] == true, "\(retried)")
        #expect(retried["result"] == ["delivered": scene])
    }

    /// An offer naming a window of another user (a node would never send one: the drop is
    /// refused up front) delivers nothing: the window's node checks the user too.
    @Test func anOfferNamingAnotherUsersWindowDeliversNothing() {
        var nodes = TwoNodes()
        let (target, targetResult) = nodes.b.connect(name: "alice")
        let offer: JSONValue = [
            "drag": "drg_forged", "scene": targetResult["scene"] ?? .null, "workspace": "default", "user": "mallory",
            "event": ["drag": "drg_forged", "items": [], "operation": "copy"], "ended": ["drag": "drg_forged"],
        ]
        let produced = nodes.b.run(.notice(.signal(NodeSignal(from: NodeID("a"), to: NodeID("b"), kind: .dropOffered(offer)))))
        #expect(produced.events(to: target, named: "itemsDropped").isEmpty)
        #expect(!produced.contains { if case .commit = $0 { true } else { false } })
        let answers = produced.compactMap { effect -> JSONValue? in
            if case .signal(let signal) = effect, case .dropReceived(let answer) = signal.kind { answer } else { nil }
        }
        #expect(answers.map { $0["delivered"] } == [false])
    }

    /// a takes the drop and goes (a drain whose answer is lost, a rejoin, a crash) before it
    /// hears b; the window on b closed meanwhile. b settles the items as the dropper's itself:
    /// in the store with the key's record of the items, and tells the source: a retry through
    /// b gets the items, not `outcome_unknown` or `drag_already_dropped`.
    @Test func aDropOntoAClosedWindowIsSettledByItsNodeEvenIfTheDroppingNodeWentAway() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        nodes.b.run(.closed(setup.target, abnormal: true))
        let drop: JSONObject = ["drag": setup.drag, "target": "scene", "scene": setup.targetScene, "operation": "move",
                                "idempotencyKey": "remote-5"]
        let dropped = nodes.a.send(setup.dropper, "drop", drop)
        let onB = TwoNodes.deliver(dropped, to: &nodes.b)
        let settle = onB.compactMap { if case .commit(let commit) = $0 { commit } else { nil } }
        #expect(settle.count == 1, "b settles it: \(settle)")
        #expect(settle.first.map { ClusterDropEndingTests.recordsTheKey($0.commands) } == true, "with the key's record")
        let ended = onB.compactMap { effect -> JSONValue? in
            if case .signal(let signal) = effect, case .dragEnded(let json) = signal.kind { json } else { nil }
        }
        #expect(ended.first?["event"]?["target"]?["scene"] == setup.dropperScene, "the source told: \(ended)")
        // a is gone: nothing of b reaches it. The retry, through b, once a's reservation lapsed.
        nodes.b.clock.advance(Millis(nodes.b.hub.settings.nodeLeaseMs) + 1)
        let (retrier, _) = nodes.b.connect()
        let retried = nodes.b.request(retrier, "drop", drop)
        #expect(retried["ok"] == true, "\(retried)")
        #expect(retried["result"]?["items"]?.arrayValue?.first?["title"] == "Notes")
        #expect(retried["result"]?["operation"] == "move")
    }

    /// b settled the drop (the window gone there) but its answer is late: a's take-back after
    /// its timeout conflicts, and a waits for b's answer instead of reading the conflict as a
    /// delivery; it answers the items once b says so.
    @Test func aTakeBackThatConflictsIsAnsweredFromHowTheOtherNodeSettledIt() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        nodes.b.run(.closed(setup.target, abnormal: true))
        let dropped = nodes.a.send(setup.dropper, "drop", ["drag": setup.drag, "target": "scene",
                                                           "scene": setup.targetScene, "operation": "copy"])
        let onB = TwoNodes.deliver(dropped, to: &nodes.b)
        nodes.a.clock.advance(Millis(nodes.a.hub.settings.dropConfirmTimeoutMs))
        let conflicted = nodes.a.run(.tick)
        #expect(Self.reply(conflicted, to: setup.dropper) == nil, "not `{\"delivered\"}`: waits for b's answer")
        let answered = TwoNodes.deliver(onB, to: &nodes.a)
        let reply = Self.reply(answered, to: setup.dropper)
        #expect(reply?["result"]?["items"]?.arrayValue?.first?["title"] == "Notes", "\(String(describing: reply))")
        #expect(nodes.a.effects.events(to: setup.source, named: "dragEnded").count == 1)
    }

    /// a drains while b has not answered (b died): a takes the items back at once, while the
    /// drain waits for the commit, instead of stopping with the drop unsettled.
    @Test func aDrainingNodeTakesBackItsUnansweredDropsAtOnce() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        let drop: JSONObject = ["drag": setup.drag, "target": "scene", "scene": setup.targetScene, "operation": "move",
                                "idempotencyKey": "remote-6"]
        nodes.a.send(setup.dropper, "drop", drop)
        let drained = nodes.a.run(.drain)
        let commits = drained.compactMap { if case .commit(let commit) = $0 { commit } else { nil } }
        #expect(commits.count == 1, "the items taken back: \(commits)")
        #expect(commits.first.map { ClusterDropEndingTests.recordsTheKey($0.commands) } == true)
        #expect(nodes.a.effects.events(to: setup.source, named: "dragEnded").first?["target"]?["scene"]
                    == setup.dropperScene)
        // b comes back: the offer delivers nothing; a retry through b gets the items.
        #expect(TwoNodes.deliver(nodes.a.effects, to: &nodes.b).events(to: setup.target, named: "itemsDropped").isEmpty)
        nodes.b.clock.advance(Millis(nodes.b.hub.settings.nodeLeaseMs) + 1)
        let (retrier, _) = nodes.b.connect()
        #expect(nodes.b.request(retrier, "drop", drop)["result"]?["items"]?.arrayValue?.first?["title"] == "Notes")
    }

    /// A draining node holds the dropper's scene open while the take-back's commit is in
    /// flight, and closes it only after the drop's answer went out: the drain's 1001 never
    /// overtakes it (`connectionsAwaitingCommits`).
    @Test func aDrainingNodeAnswersTheDropperBeforeClosingIt() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        nodes.a.send(setup.dropper, "drop", ["drag": setup.drag, "target": "scene", "scene": setup.targetScene,
                                             "operation": "move", "idempotencyKey": "remote-7"])
        nodes.a.completesCommits = false
        let drained = nodes.a.run(.drain)
        #expect(drained.closes(setup.dropper).isEmpty, "held open while its answer is owed")
        #expect(Self.reply(drained, to: setup.dropper) == nil)
        let answered = nodes.a.completeCommits()
        let closed = answered.firstIndex { effect in
            if case .close(let target, _, _) = effect { target == setup.dropper } else { false }
        }
        #expect(closed != nil, "closed once answered: \(answered)")
        let before = Array(answered[..<(closed ?? answered.endIndex)])
        #expect(Self.reply(before, to: setup.dropper)?["result"]?["items"]?.arrayValue?.first?["title"] == "Notes",
                "the items answered before the close: \(answered)")
    }

    /// An offer whose key record is not the dropper's user's (a node never sends one) is not
    /// written: nothing is delivered or settled there.
    @Test func anOfferWithAnotherUsersKeyRecordDeliversNothing() {
        var nodes = TwoNodes()
        let (target, targetResult) = nodes.b.connect(name: "alice")
        let forged = RequestRecord(slot: RequestKeySlot(owner: OwnerKey(workspace: "default", user: "mallory"),
                                                        key: RequestKey("k")),
                                   fingerprint: "drop", result: ["delivered": targetResult["scene"] ?? .null], at: 0)
        let offer: JSONValue = [
            "drag": "drg_forged", "scene": targetResult["scene"] ?? .null, "workspace": "default", "user": "alice",
            "event": ["drag": "drg_forged", "items": [], "operation": "copy"], "ended": ["drag": "drg_forged"],
            "record": forged.json,
        ]
        let produced = nodes.b.run(.notice(.signal(NodeSignal(from: NodeID("a"), to: NodeID("b"), kind: .dropOffered(offer)))))
        #expect(produced.events(to: target, named: "itemsDropped").isEmpty)
        #expect(!produced.contains { if case .commit = $0 { true } else { false } })
    }

    /// The source and the window dropped onto on node b (so b is the drag's node), the dropping
    /// window on a, and a drag b began and a heard of.
    static func setUpOnB(_ nodes: inout TwoNodes) -> Setup {
        let (dropper, dropperResult) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (target, targetResult) = nodes.b.connect()
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        let (source, _) = nodes.b.connect()
        let began = nodes.b.send(source, "beginDrag", ["items": [ClusterDropEndingTests.item]])
        TwoNodes.deliver(began, to: &nodes.a)
        let drag = began.messages(to: source).last { $0["type"] == "reply" }?["result"]?["drag"] ?? .null
        return Setup(source: source, dropper: dropper, dropperScene: dropperResult["scene"] ?? .null, target: target,
                     targetScene: targetResult["scene"] ?? .null, drag: drag)
    }

    /// b, the drag's node, past its expiry and then `recoveryWait`: what it does then.
    static func expireAndRecover(_ nodes: inout TwoNodes, _ setup: Setup) -> [Effect] {
        let settings = nodes.b.hub.settings
        nodes.b.clock.advance(Millis(settings.dragLifetimeMs))
        var heard = nodes.b.run(.tick).events(to: setup.source, named: "dragEnded")
        #expect(heard.isEmpty, "the expiry finds the drag dropped, and tells nothing yet: \(heard)")
        nodes.b.clock.advance(nodes.b.hub.recoveryWait - 1)
        heard = nodes.b.run(.tick).events(to: setup.source, named: "dragEnded")
        #expect(heard.isEmpty, "nor before `recoveryWait`: \(heard)")
        nodes.b.clock.advance(1)
        return nodes.b.run(.tick)
    }

    /// a takes a drop onto the window on b and dies before its offer leaves (issue 27, the
    /// shape left last session): the drag has ended in the store, unsettled, and nobody would
    /// settle it. b, the drag's node, settles it `recoveryWait` after the drag's expiry, as
    /// returned: its source hears `dragEnded` `returned` (it keeps the items of the move), once;
    /// an offer of a that was only slow delivers nothing then.
    @Test func aDropWhoseNodeDiedBeforeOfferingItIsSettledByTheDragsNodeAsReturned() {
        var nodes = TwoNodes()
        let setup = Self.setUpOnB(&nodes)
        let dropped = nodes.a.send(setup.dropper, "drop", ["drag": setup.drag, "target": "scene",
                                                           "scene": setup.targetScene, "operation": "move",
                                                           "idempotencyKey": "remote-8"])
        #expect(Self.offers(in: dropped).count == 1, "a has the ending in the store and offers it; the offer is lost")
        let heard = Self.expireAndRecover(&nodes, setup).events(to: setup.source, named: "dragEnded")
        #expect(heard.count == 1, "\(heard)")
        #expect(heard.first?["outcome"] == "returned")
        #expect(nodes.b.committed.last?.base == 1, "settled by the compare-and-set a settling node makes")
        let late = TwoNodes.deliver(dropped, to: &nodes.b)
        #expect(late.events(to: setup.target, named: "itemsDropped").isEmpty, "the store refuses a second settling")
        #expect(late.events(to: setup.source, named: "dragEnded").isEmpty)
        nodes.b.clock.advance(nodes.b.hub.recoveryWait)
        #expect(nodes.b.run(.tick).events(to: setup.source, named: "dragEnded").isEmpty, "told once")
    }

    /// a takes a drop onto the window on b and dies before its offer leaves; before the drag
    /// expires, its client's retry (once a's reservation of the key has lapsed) or the source's
    /// cancel reaches b, the drag's node, which asks the store and is refused: the drag ended.
    /// b has heard nothing of how, so it still settles the drop as returned `recoveryWait` after
    /// the expiry (review of issue 27, item 1: the refusal marked the drag dropped, and its
    /// expiry then dropped it without settling).
    @Test(arguments: [false, true])
    func aDropNobodySettledIsSettledByTheDragsNodeAfterARetryOrCancelThere(retried: Bool) {
        var nodes = TwoNodes()
        let setup = Self.setUpOnB(&nodes)
        let drop: JSONObject = ["drag": setup.drag, "target": "scene", "scene": setup.targetScene, "operation": "move",
                                "idempotencyKey": "remote-11"]
        let dropped = nodes.a.send(setup.dropper, "drop", drop)
        #expect(Self.offers(in: dropped).count == 1, "a has the ending in the store and offers it; the offer is lost")
        let settings = nodes.b.hub.settings
        let refused: JSONValue
        if retried {
            nodes.b.clock.advance(Millis(settings.nodeLeaseMs) + 1)
            let (retrier, _) = nodes.b.connect()
            refused = nodes.b.request(retrier, "drop", drop)
        } else {
            refused = nodes.b.request(setup.source, "cancelDrag", ["drag": setup.drag])
        }
        #expect(refused["error"]?["code"] == "drag_already_dropped", "\(refused)")
        #expect(nodes.b.effects.events(to: setup.source, named: "dragEnded").isEmpty)
        nodes.b.clock.advance(Millis(settings.dragLifetimeMs))
        var heard = nodes.b.run(.tick).events(to: setup.source, named: "dragEnded")
        #expect(heard.isEmpty, "expired, and not settled before `recoveryWait`: \(heard)")
        nodes.b.clock.advance(nodes.b.hub.recoveryWait)
        heard = nodes.b.run(.tick).events(to: setup.source, named: "dragEnded")
        #expect(heard.map { $0["outcome"] } == ["returned"], "\(heard)")
        #expect(nodes.b.committed.last?.base == 1, "settled by the compare-and-set a settling node makes")
        let late = TwoNodes.deliver(dropped, to: &nodes.b)
        #expect(late.events(to: setup.target, named: "itemsDropped").isEmpty, "the store refuses a second settling")
        nodes.b.clock.advance(nodes.b.hub.recoveryWait)
        #expect(nodes.b.run(.tick).events(to: setup.source, named: "dragEnded").isEmpty, "told once")
    }

    /// A drop a delivered itself (onto another window of a) is settled in the commit that ended
    /// the drag: when a's `dragEnded` never reaches b (a died right after), b's settling after
    /// `recoveryWait` conflicts, and the source is not told `returned` for items a delivered.
    @Test func aDropDeliveredOnTheDroppingNodeIsNeverSettledAgainAsReturned() {
        var nodes = TwoNodes()
        let setup = Self.setUpOnB(&nodes)
        let (other, otherResult) = nodes.a.connect()
        let dropped = nodes.a.send(setup.dropper, "drop", ["drag": setup.drag, "target": "scene",
                                                           "scene": otherResult["scene"] ?? .null, "operation": "move"])
        #expect(dropped.events(to: other, named: "itemsDropped").count == 1)
        #expect(Self.offers(in: dropped).isEmpty)
        let recovered = Self.expireAndRecover(&nodes, setup)
        let heard = recovered.events(to: setup.source, named: "dragEnded")
        #expect(heard.isEmpty, "the items went to a's window: \(heard)")
        let settling = recovered.compactMap { if case .commit(let commit) = $0 { commit } else { nil } }
        #expect(settling.map(\.base) == [1], "b tried to settle it (it heard nothing), and lost")
    }

    /// a cannot write (its database unreachable) from its drop until well past the drag's
    /// expiry: b, the drag's node, settles the drop as returned to the source meanwhile. a's
    /// take-back then conflicts, and b's answer to the late offer says b settled nothing either:
    /// a answers the error a retry would get (nothing was applied for the dropper), not
    /// `{"delivered"}`, which it read a conflict as before.
    @Test func aTakeBackThatLostToTheDragsNodeIsAnsweredAsNothingApplied() {
        var nodes = TwoNodes()
        let setup = Self.setUpOnB(&nodes)
        let dropped = nodes.a.send(setup.dropper, "drop", ["drag": setup.drag, "target": "scene",
                                                           "scene": setup.targetScene, "operation": "move",
                                                           "idempotencyKey": "remote-9"])
        let wait = Millis(nodes.a.hub.settings.dropConfirmTimeoutMs)
        nodes.a.completesCommits = false
        nodes.a.clock.advance(wait)
        nodes.a.run(.tick)
        #expect(nodes.a.pendingCommits.count == 1, "the take-back")
        nodes.a.completeCommits(.failed("database unreachable"))
        let heard = Self.expireAndRecover(&nodes, setup).events(to: setup.source, named: "dragEnded")
        #expect(heard.map { $0["outcome"] } == ["returned"], "\(heard)")
        nodes.a.completesCommits = true
        nodes.a.clock.advance(wait)
        #expect(Self.reply(nodes.a.run(.tick), to: setup.dropper) == nil, "conflicted: waits for b's answer")
        let answered = TwoNodes.deliver(TwoNodes.deliver(dropped, to: &nodes.b), to: &nodes.a)
        let reply = Self.reply(answered, to: setup.dropper)
        #expect(reply?["ok"] == false, "\(String(describing: reply))")
        #expect(reply?["error"]?["code"] == "drag_already_dropped")
    }

    /// a's take-back fails while b is dead (a's database unreachable): a tries again only while
    /// its reservation of the drop's key stands (`nodeLeaseMs` less a heartbeat from the drop),
    /// then gives the drop up, answering `outcome_unknown` (issue 27, the take-back that retried
    /// without bound). The drag began on a, so a settles it as returned `recoveryWait` after
    /// the drag's expiry, once it can write again; a retry of the drop gets an error.
    @Test func aTakeBackThatCannotBeWrittenIsGivenUpWithinTheKeysReservation() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        let drop: JSONObject = ["drag": setup.drag, "target": "scene", "scene": setup.targetScene, "operation": "move",
                                "idempotencyKey": "remote-10"]
        nodes.a.send(setup.dropper, "drop", drop)
        let settings = nodes.a.hub.settings
        let wait = Millis(settings.dropConfirmTimeoutMs)
        nodes.a.completesCommits = false
        var attempts = 0
        var reply: JSONValue?
        var elapsed: Millis = 0
        while reply == nil, elapsed < Millis(4 * settings.nodeLeaseMs) {
            nodes.a.clock.advance(wait)
            elapsed += wait
            nodes.a.run(.tick)
            attempts += nodes.a.pendingCommits.count
            reply = Self.reply(nodes.a.completeCommits(.failed("database unreachable")), to: setup.dropper)
        }
        #expect(reply?["error"]?["code"] == "outcome_unknown", "\(String(describing: reply))")
        #expect(elapsed + wait > Millis(settings.nodeLeaseMs - settings.nodeHeartbeatMs), "tried while reserved")
        #expect(elapsed <= Millis(settings.nodeLeaseMs - settings.nodeHeartbeatMs), "and not after: \(attempts)")
        nodes.a.clock.advance(nodes.a.hub.recoveryWait)
        nodes.a.run(.tick)
        #expect(nodes.a.pendingCommits.isEmpty, "given up: \(nodes.a.pendingCommits)")
        nodes.a.completesCommits = true
        // a writes again; the drag's expiry, then `recoveryWait`.
        nodes.a.clock.advance(Millis(settings.dragLifetimeMs))
        nodes.a.run(.tick)
        let heard = nodes.a.effects.events(to: setup.source, named: "dragEnded")
        #expect(heard.map { $0["outcome"] } == ["returned"], "\(heard)")
        let (retrier, _) = nodes.a.connect()
        let retried = nodes.a.request(retrier, "drop", drop)
        #expect(retried["ok"] == false, "\(retried)")
        #expect(retried["error"]?["code"] == "drag_not_found")
    }

    /// a's take-back fails (its database unreachable) until a gives the drop up and answers
    /// `outcome_unknown`; b, alive but slow, reads the offer only after that. By then a has
    /// freed its key (`released`), or a retry through b has taken the key over and been
    /// refused `drag_already_dropped` (a's release never reached the store). b's settling needs
    /// a's reservation still held, in the same commit: refused, it delivers nothing and tells
    /// the source nothing, and a, the drag's node, settles the drop as returned
    /// (issue 27, the strict settle after a give-up; review item 3: b used to write its record
    /// where no reservation was, and deliver items a retry had been told were dropped nowhere).
    @Test(arguments: [false, true])
    func aSlowWindowNodeSettlesNothingOnceTheDroppingNodeGaveTheDropUp(retried: Bool) {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        let drop: JSONObject = ["drag": setup.drag, "target": "scene", "scene": setup.targetScene, "operation": "move",
                                "idempotencyKey": "remote-13"]
        let dropped = nodes.a.send(setup.dropper, "drop", drop)
        #expect(Self.offers(in: dropped).count == 1, "offered; b reads it late")
        let settings = nodes.a.hub.settings
        nodes.a.completesCommits = false
        nodes.a.holdsPersists = retried
        var reply: JSONValue?
        var elapsed: Millis = 0
        while reply == nil, elapsed < Millis(4 * settings.nodeLeaseMs) {
            nodes.a.clock.advance(Millis(settings.dropConfirmTimeoutMs))
            elapsed += Millis(settings.dropConfirmTimeoutMs)
            nodes.a.run(.tick)
            reply = Self.reply(nodes.a.completeCommits(.failed("database unreachable")), to: setup.dropper)
        }
        #expect(reply?["error"]?["code"] == "outcome_unknown", "\(String(describing: reply))")
        if retried {
            nodes.b.clock.advance(Millis(settings.nodeLeaseMs) + 1)
            let (retrier, _) = nodes.b.connect()
            let refused = nodes.b.request(retrier, "drop", drop)
            #expect(refused["error"]?["code"] == "drag_already_dropped", "\(refused)")
        }
        let late = TwoNodes.deliver(dropped, to: &nodes.b)
        #expect(late.events(to: setup.target, named: "itemsDropped").isEmpty, "refused by the store: nothing delivered")
        #expect(TwoNodes.deliver(late, to: &nodes.a).events(to: setup.source, named: "dragEnded").isEmpty)
        #expect(nodes.b.committed.allSatisfy { commit in !commit.commands.contains { $0 == .coordination(.settleDrop(setup.drag.stringValue ?? "")) } },
                "b settled nothing")
        // a writes again; past the drag's expiry and `recoveryWait` it settles the drop as returned.
        nodes.a.completesCommits = true
        nodes.a.releasePersists()
        nodes.a.clock.advance(Millis(settings.dragLifetimeMs) + nodes.a.hub.recoveryWait)
        nodes.a.run(.tick)
        let heard = nodes.a.effects.events(to: setup.source, named: "dragEnded")
        #expect(heard.map { $0["outcome"] } == ["returned"], "\(heard)")
        let (retrier, _) = nodes.a.connect()
        let retriedAgain = nodes.a.request(retrier, "drop", drop)
        #expect(retriedAgain["ok"] == false, "nothing of the drop was applied: \(retriedAgain)")
    }

    /// a's first take-back fails (its database unreachable for a moment); before its second,
    /// the drop's retry reaches b once a's reservation is stale, takes the key over, is
    /// refused `drag_already_dropped`, and frees the key. a's second take-back, still within
    /// its own reckoning of the reservation, needs the reservation held: refused, a gives the
    /// drop up (`outcome_unknown`) instead of answering the items (and telling the source they
    /// went to the dropper) after the retry was told they went nowhere; the drag's node returns
    /// them to the source.
    @Test func aTakeBackAfterARetryTookTheKeyOverSettlesNothing() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        let drop: JSONObject = ["drag": setup.drag, "target": "scene", "scene": setup.targetScene, "operation": "move",
                                "idempotencyKey": "remote-14"]
        nodes.a.send(setup.dropper, "drop", drop)
        let settings = nodes.a.hub.settings
        let wait = Millis(settings.dropConfirmTimeoutMs)
        nodes.a.completesCommits = false
        nodes.a.clock.advance(wait)
        nodes.a.run(.tick)
        #expect(nodes.a.pendingCommits.count == 1, "the take-back")
        #expect(Self.reply(nodes.a.completeCommits(.failed("database unreachable")), to: setup.dropper) == nil,
                "tried again within the key's reservation")
        nodes.b.clock.advance(Millis(settings.nodeLeaseMs) + 1)
        let (retrier, _) = nodes.b.connect()
        let refused = nodes.b.request(retrier, "drop", drop)
        #expect(refused["error"]?["code"] == "drag_already_dropped", "\(refused)")
        nodes.a.completesCommits = true
        nodes.a.clock.advance(wait)
        let produced = nodes.a.run(.tick)
        let reply = Self.reply(produced, to: setup.dropper)
        #expect(reply?["error"]?["code"] == "outcome_unknown", "\(String(describing: reply))")
        #expect(produced.events(to: setup.source, named: "dragEnded").isEmpty, "\(produced.events(to: setup.source, named: "dragEnded"))")
        nodes.a.clock.advance(Millis(settings.dragLifetimeMs) + nodes.a.hub.recoveryWait)
        nodes.a.run(.tick)
        let heard = nodes.a.effects.events(to: setup.source, named: "dragEnded")
        #expect(heard.map { $0["outcome"] } == ["returned"], "\(heard)")
        let again = nodes.b.request(retrier, "drop", drop)
        #expect(again["ok"] == false, "still nothing applied: \(again)")
    }

    /// The same, but the drop comes near the end of the drag's life: the drag's expiry on a
    /// (where it began) comes between a's failed take-backs, finds the drag dropped here, and
    /// removes it. a still settles the drop as returned `recoveryWait` after giving it up
    /// (review of issue 27, item 2: the give-up found no drag and scheduled nothing).
    @Test func aTakeBackGivenUpAfterTheDragsExpiryIsStillSettledByTheDragsNode() {
        var nodes = TwoNodes()
        let setup = Self.setUp(&nodes)
        let settings = nodes.a.hub.settings
        let step = Millis(settings.nodeHeartbeatMs)
        nodes.a.clock.advance(Millis(settings.dragLifetimeMs) - 3 * step)
        nodes.a.send(setup.dropper, "drop", ["drag": setup.drag, "target": "scene", "scene": setup.targetScene,
                                             "operation": "move", "idempotencyKey": "remote-12"])
        nodes.a.completesCommits = false
        var reply: JSONValue?
        var elapsed: Millis = 0
        while reply == nil, elapsed < Millis(4 * settings.nodeLeaseMs) {
            nodes.a.clock.advance(step)
            elapsed += step
            nodes.a.run(.tick)
            reply = Self.reply(nodes.a.completeCommits(.failed("database unreachable")), to: setup.dropper)
        }
        #expect(reply?["error"]?["code"] == "outcome_unknown", "\(String(describing: reply))")
        #expect(elapsed > 3 * step, "given up after the drag's expiry: \(elapsed)")
        #expect(nodes.a.effects.events(to: setup.source, named: "dragEnded").isEmpty)
        nodes.a.completesCommits = true
        nodes.a.clock.advance(nodes.a.hub.recoveryWait)
        nodes.a.run(.tick)
        let heard = nodes.a.effects.events(to: setup.source, named: "dragEnded")
        #expect(heard.map { $0["outcome"] } == ["returned"], "\(heard)")
        #expect(nodes.a.committed.last?.base == 1, "settled by the compare-and-set a settling node makes")
    }

    /// A node of the release before the drop confirmation sends the items unconfirmed
    /// (`itemsDropped`); during a rolling upgrade the window here still gets them, once.
    @Test func anOldNodesItemsDroppedSignalIsDeliveredOnce() throws {
        var nodes = TwoNodes()
        let (target, targetResult) = nodes.b.connect()
        let wire: JSONValue = ["from": "a", "to": "b", "itemsDropped": [
            "scene": targetResult["scene"] ?? .null,
            "event": ["drag": "drg_old", "items": [ClusterDropEndingTests.item["activity"] ?? .null], "operation": "copy"],
        ]]
        let signal = try #require(NodeSignal(json: wire))
        #expect(NodeSignal(json: signal.json) == signal)
        let produced = nodes.b.run(.notice(.signal(signal)))
        let received = produced.events(to: target, named: "itemsDropped")
        #expect(received.count == 1, "\(received)")
        #expect(received.first?["drag"] == "drg_old")
    }
}
