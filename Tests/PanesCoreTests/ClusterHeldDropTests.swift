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
        var nodes: TwoNodes
        let target: ConnectionID
        let targetResult: JSONValue
        let drag: JSONValue
        let dropped: [Effect]

        init(key: String, settings: Settings = Settings()) {
            nodes = TwoNodes(settings: settings)
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

    /// `DropOntoB` settled by b while its window closes: the drop stays held for the window's
    /// session, which b lets go; returns the session.
    static func windowClosedDuringTheSettling(_ drop: DropOntoB, _ nodes: inout TwoNodes) throws -> SessionID {
        nodes.b.completesCommits = false
        _ = TwoNodes.deliver(drop.dropped, to: &nodes.b)
        _ = nodes.b.run(.closed(drop.target, abnormal: false))
        nodes.b.completeCommits()
        nodes.b.completesCommits = true
        let session = Self.session(drop.targetResult)
        #expect(try nodes.b.store.loadHeldDrops(session, now: 0).map(\.drag.rawValue) == [drop.drag.stringValue ?? ""])
        #expect(try nodes.b.store.loadState().claims[session]?.node == nil, "b let the session go")
        return session
    }

    /// What `node` sent `connection` checked: `connected` first, then the drag's `itemsDropped`
    /// once (`count` 1) or not at all (0).
    static func expectDelivered(_ messages: [JSONValue], _ drag: JSONValue, count: Int,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        let connected = messages.firstIndex { $0["type"] == "reply" }
        #expect(connected.map { messages[$0]["ok"] } == true, "\(messages)", sourceLocation: sourceLocation)
        let delivered = messages.indices.filter { messages[$0]["type"] == "itemsDropped" }
        #expect(delivered.count == count, "\(messages)", sourceLocation: sourceLocation)
        #expect(delivered.allSatisfy { $0 > connected ?? .max }, "after connected", sourceLocation: sourceLocation)
        #expect(delivered.allSatisfy { messages[$0]["drag"] == drag }, sourceLocation: sourceLocation)
    }

    /// The window's session resumes through a after b let it go: a did not hold it and
    /// takes nothing over, but its claim's write finds the drop held, and a sends it.
    @Test func aDropWhoseWindowClosedDuringItsSettlingReachesTheWindowResumedThroughAnotherNode() throws {
        let drop = DropOntoB(key: "held-5")
        var nodes = drop.nodes
        let session = try Self.windowClosedDuringTheSettling(drop, &nodes)
        // a reads that b let the session go: its claim is no takeover.
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        #expect(nodes.a.hub.cluster.claims[session].map { $0.node == nil } ?? true)

        let reload = nodes.a.open()
        _ = nodes.a.send(reload, "connect", ClusterLeaseTests.resume(drop.targetResult))
        Self.expectDelivered(nodes.a.effects.messages(to: reload), drop.drag, count: 1)
        #expect(try nodes.a.store.loadHeldDrops(session, now: 0).isEmpty, "released once sent")
        #expect(nodes.a.hub.cluster.heldDropsToRead.isEmpty)
    }

    /// A claim that finds nothing held marks nothing, and the attach reads nothing: a resume of
    /// a session another node let go, and a takeover from a node that died.
    @Test(arguments: [false, true])
    func aResumeWithNothingHeldReadsNothing(takeover: Bool) throws {
        var nodes = TwoNodes()
        let (tab, first) = nodes.b.connect()
        if !takeover { _ = nodes.b.run(.closed(tab, abnormal: false)) }
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        let before = nodes.a.effects.count
        var messages: [JSONValue]
        if takeover {
            messages = Self.resume(first, through: &nodes.a, from: "b")
        } else {
            let reload = nodes.a.open()
            messages = nodes.a.send(reload, "connect", ClusterLeaseTests.resume(first)).messages(to: reload)
        }
        #expect(messages.first?["ok"] == true, "\(messages)")
        #expect(messages.first?["result"]?["created"] == false)
        #expect(!nodes.a.effects[before...].contains { if case .load(.heldDrops) = $0 { true } else { false } })
        #expect(nodes.a.hub.cluster.heldDropsToRead.isEmpty)
    }

    /// The read of a held drop fails: the session stays marked, and its next attach on
    /// that node reads it again and sends it.
    @Test func aHeldDropWhoseReadFailedIsReadAgainAtTheSessionsNextAttach() throws {
        let drop = DropOntoB(key: "held-6")
        var nodes = drop.nodes
        let session = try Self.windowClosedDuringTheSettling(drop, &nodes)
        nodes.b.completesLoads = false
        let reload = nodes.b.open()
        _ = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(drop.targetResult))
        #expect(nodes.b.pendingLoads.contains { if case .heldDrops(session, _) = $0 { true } else { false } })
        let failed = nodes.b.failLoads("the store is unavailable")
        nodes.b.completesLoads = true
        #expect(failed.events(to: reload, named: "itemsDropped").isEmpty)
        #expect(nodes.b.hub.cluster.heldDropsToRead.contains(session), "still marked")
        #expect(try nodes.b.store.loadHeldDrops(session, now: 0).count == 1, "still held")

        _ = nodes.b.run(.closed(reload, abnormal: false))
        let again = nodes.b.open()
        _ = nodes.b.send(again, "connect", ClusterLeaseTests.resume(drop.targetResult))
        Self.expectDelivered(nodes.b.effects.messages(to: again), drop.drag, count: 1)
        #expect(try nodes.b.store.loadHeldDrops(session, now: 0).isEmpty)
        #expect(!nodes.b.hub.cluster.heldDropsToRead.contains(session))
    }

    /// The read of a held drop fails while the window stays open: it is read again after the
    /// shared store's backoff (50 ms, then 100 ms), not only at the session's next attach, and
    /// the window gets the drop once the read succeeds.
    @Test func aHeldDropWhoseReadFailedIsReadAgainWhileTheWindowStaysOpen() throws {
        let drop = DropOntoB(key: "held-8")
        var nodes = drop.nodes
        let session = try Self.windowClosedDuringTheSettling(drop, &nodes)
        nodes.b.completesLoads = false
        let reload = nodes.b.open()
        _ = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(drop.targetResult))
        func reading() -> Bool {
            nodes.b.pendingLoads.contains { if case .heldDrops(session, _) = $0 { true } else { false } }
        }
        #expect(reading())
        _ = nodes.b.failLoads("the store is unavailable")
        nodes.b.clock.advance(49)
        _ = nodes.b.run(.tick)
        #expect(!reading(), "not before the backoff")
        nodes.b.clock.advance(1)
        _ = nodes.b.run(.tick)
        #expect(reading(), "read again after 50 ms")
        _ = nodes.b.failLoads("the store is unavailable")
        nodes.b.clock.advance(99)
        _ = nodes.b.run(.tick)
        #expect(!reading(), "the pause doubled")

        nodes.b.completesLoads = true
        nodes.b.clock.advance(1)
        let delivered = nodes.b.run(.tick)
        #expect(delivered.events(to: reload, named: "itemsDropped").map { $0["drag"] } == [drop.drag])
        #expect(try nodes.b.store.loadHeldDrops(session, now: 0).isEmpty)
        #expect(!nodes.b.hub.cluster.heldDropsToRead.contains(session))
        #expect(nodes.b.hub.cluster.heldDropReadFailures.isEmpty && nodes.b.hub.cluster.heldDropRetries.isEmpty)
    }

    /// The reads again are bounded (`heldDropReadRetries`): past it, and for a window that
    /// closed, nothing more is read until the session's next attach, which still is marked.
    @Test func aHeldDropReadFailingPastHeldDropReadRetriesWaitsForTheNextAttach() throws {
        var settings = Settings()
        settings.heldDropReadRetries = 1
        let drop = DropOntoB(key: "held-9", settings: settings)
        var nodes = drop.nodes
        let session = try Self.windowClosedDuringTheSettling(drop, &nodes)
        nodes.b.completesLoads = false
        let reload = nodes.b.open()
        _ = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(drop.targetResult))
        func reading() -> Bool {
            nodes.b.pendingLoads.contains { if case .heldDrops(session, _) = $0 { true } else { false } }
        }
        _ = nodes.b.failLoads("the store is unavailable")
        nodes.b.clock.advance(50)
        _ = nodes.b.run(.tick)
        #expect(reading(), "one read again")
        _ = nodes.b.failLoads("the store is unavailable")
        nodes.b.clock.advance(60_000)
        _ = nodes.b.run(.tick)
        #expect(!reading(), "no more")
        #expect(nodes.b.hub.cluster.heldDropsToRead.contains(session), "still marked")
        #expect(nodes.b.hub.cluster.heldDropReadFailures.isEmpty && nodes.b.hub.cluster.heldDropRetries.isEmpty)
    }

    /// Past `maxHeldDropMarks` the oldest mark is forgotten and counted; its drop stays
    /// held, and the session's next attach, which claims it, still finds and sends it.
    @Test func pastMaxHeldDropMarksTheOldestIsForgottenCountedAndItsDropStillDelivered() throws {
        var settings = Settings()
        settings.maxHeldDropMarks = 1
        let drop = DropOntoB(key: "held-7", settings: settings)
        var nodes = drop.nodes
        let session = try Self.windowClosedDuringTheSettling(drop, &nodes)
        #expect(nodes.b.hub.cluster.heldDropsToRead.contains(session))
        nodes.b.hub.markHeldDrops(of: SessionID("ses_other"))
        #expect(!nodes.b.hub.cluster.heldDropsToRead.contains(session), "the oldest goes")
        #expect(nodes.b.hub.cluster.heldDropsToRead.count == 1)
        #expect(nodes.b.hub.metrics.heldDropMarksForgotten == 1)
        #expect(nodes.b.hub.metricsText().contains("panes_held_drop_marks_forgotten_total 1\n"))

        let reload = nodes.b.open()
        _ = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(drop.targetResult))
        Self.expectDelivered(nodes.b.effects.messages(to: reload), drop.drag, count: 1)
        #expect(try nodes.b.store.loadHeldDrops(session, now: 0).isEmpty)
    }

    /// The holder of a session says it has no scene of it: the asking node lets the
    /// holder's claim go and claims the session; its claim finds the drop the holder settled
    /// for the window and never sent, and the window gets it after `connected`.
    @Test func aSessionWhoseHolderSaidItHasNoSceneGetsTheDropHeldForIt() throws {
        var (nodes, tab, first) = try ClusterNodeLivenessTests.windowOnA()
        ClusterNodeLivenessTests.sceneEndedInAnOutage(&nodes, tab)
        let session = Self.session(first)
        // A drop a settled for the window before its scene ended, and never sent.
        let event: JSONObject = ["drag": "drg_left", "operation": "copy", "items": [ClusterDropEndingTests.item]]
        try nodes.a.store.apply([.coordination(.holdDrop(
            HeldDrop(session: session, drag: Identifier("drg_left"), event: event, keptUntil: nodes.a.clock.now + 60_000),
            forgetBefore: 0))])
        let reload = nodes.b.open()
        let asked = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first))
        nodes.a.completesCommits = false
        let answered = TwoNodes.deliver(asked, to: &nodes.a)
        #expect(answered.contains { if case .signal(let s) = $0, case .notLive = s.kind { true } else { false } })
        nodes.b.completesCommits = false
        _ = TwoNodes.deliver(answered, to: &nodes.b)
        #expect(nodes.b.pendingCommits.count == 1, "b's claim, in flight")
        #expect(nodes.b.effects.messages(to: reload).isEmpty)

        nodes.b.completeCommits()
        Self.expectDelivered(nodes.b.effects.messages(to: reload), "drg_left", count: 1)
        #expect(try nodes.b.store.loadHeldDrops(session, now: 0).isEmpty)
    }

    /// Each node deletes held drops whose keeping ended every `heldDropPruneIntervalMs`,
    /// with no other drop held after them; those still kept stay.
    @Test func heldDropsPastTheirKeepingAreDeletedEveryPruneInterval() throws {
        var settings = Settings()
        settings.heldDropPruneIntervalMs = 60_000
        var nodes = TwoNodes(settings: settings)
        let start = nodes.b.clock.now
        func held(_ drag: String, keptFor: Millis) -> HeldDrop {
            HeldDrop(session: SessionID("ses_gone"), drag: Identifier(drag), event: ["drag": .string(drag)],
                     keptUntil: start + keptFor)
        }
        let old = held("drg_old", keptFor: 10_000), kept = held("drg_kept", keptFor: 600_000)
        try nodes.b.store.apply([.coordination(.holdDrop(old, forgetBefore: 0)), .coordination(.holdDrop(kept, forgetBefore: 0))])
        #expect(nodes.b.hub.nextDeadline.map { $0 <= start + 60_000 } == true, "the runtime wakes for it")

        nodes.b.clock.advance(59_999)
        let early = nodes.b.run(.tick)
        #expect(!early.contains { effect in
            guard case .persistQuietly(let commands) = effect else { return false }
            return commands.contains { if case .coordination(.pruneHeldDrops) = $0 { true } else { false } }
        })
        #expect(Set(nodes.b.store.heldDrops.keys) == [old.key, kept.key], "not before the interval")

        nodes.b.clock.advance(1)
        _ = nodes.b.run(.tick)
        #expect(Array(nodes.b.store.heldDrops.keys) == [kept.key])
        #expect(nodes.b.hub.nextDeadline.map { $0 <= nodes.b.clock.now + 60_000 } == true, "and again after it")
    }
}
