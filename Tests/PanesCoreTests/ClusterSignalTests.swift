@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// What one node asks of the node holding a session: liveness, bringing a window forward,
/// a refresh; and window tickets that work on whichever node the new window reaches.
@Suite struct ClusterSignalTests {
    @Test func aDuplicatedTabOnAnotherNodeForksAsSoonAsTheOriginalAnswers() {
        var nodes = TwoNodes()
        let (original, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let duplicate = nodes.b.open()
        let asked = nodes.b.send(duplicate, "connect", ClusterLeaseTests.resume(first))
        // b asks a; a pings its window.
        let pinged = TwoNodes.deliver(asked, to: &nodes.a)
        #expect(pinged.probes == [original])
        // The window answers: a tells b, which forks at once, without waiting out a lease.
        let answered = nodes.a.run(.pong(original))
        let reply = TwoNodes.deliver(answered, to: &nodes.b).messages(to: duplicate).last { $0["type"] == "reply" }
        #expect(reply?["result"]?["forkedFrom"] == first["session"]?["persistentIdentifier"])
    }

    /// A resume on a node waits for its claim on the session to commit; requests the client
    /// sent right behind the connect are answered after it, in order, as on one node.
    @Test func requestsBehindAResumeOnAnotherNodeAreAnsweredAfterTheClaim() {
        var nodes = TwoNodes()
        let (original, first) = nodes.a.connect()
        nodes.a.run(.closed(original, abnormal: false))
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        nodes.b.completesCommits = false
        let reload = nodes.b.open()
        var resume = ClusterLeaseTests.resume(first)
        resume["id"] = 1
        var effects = nodes.b.send(reload, "connect", resume)
        effects += nodes.b.send(reload, "setUserInfo", ["id": 2, "userInfo": ["pane": "right"]])
        #expect(effects.messages(to: reload).isEmpty, "the claim is on its way")
        let replies = nodes.b.completeCommits().messages(to: reload).filter { $0["type"] == "reply" }
        #expect(replies.map { $0["re"] } == [1, 2])
        #expect(replies.first?["result"]?["created"] == false, "\(replies)")
        #expect(replies.last?["result"]?["userInfo"]?["pane"] == "right", "\(replies)")
    }

    @Test func aReloadWhoseOldSocketIsDeadResumesOnAnotherNodeAfterTheProbe() {
        var nodes = TwoNodes()
        let (original, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let reload = nodes.b.open()
        let asked = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first))
        TwoNodes.deliver(asked, to: &nodes.a)
        // The old socket never answers: a closes it and lets the session go; b resumes it.
        nodes.a.clock.advance(Millis(nodes.a.hub.settings.livenessProbeTimeoutMs) + 1)
        let expired = nodes.a.run(.tick)
        #expect(expired.closes(original) == [.replaced])
        let reply = TwoNodes.deliver(expired, to: &nodes.b).messages(to: reload).last { $0["type"] == "reply" }
        #expect(reply?["result"]?["created"] == false, "\(String(describing: reply))")
        #expect(reply?["result"]?["session"]?["persistentIdentifier"] == first["session"]?["persistentIdentifier"])
    }

    static let budget: JSONValue = ["activityType": "panes.document", "title": "Budget", "targetContentIdentifier": "doc_budget"]

    @Test func openInNewWindowWorksWhicheverNodeTheNewWindowReaches() {
        var nodes = TwoNodes()
        let (tab, _) = nodes.a.connect()
        let opened = nodes.a.send(tab, "requestActivation", ["activity": Self.budget])
        let ticket = opened.messages(to: tab).last { $0["type"] == "reply" }?["result"]?["ticket"] ?? .null
        #expect(ticket != .null)
        // The new window's connect reaches b before the ticket's signal does: it waits for it.
        let window = nodes.b.open()
        let early = nodes.b.send(window, "connect", ["protocol": 1, "auth": ["name": "alice"], "ticket": ticket])
        #expect(early.messages(to: window).isEmpty)
        let connected = TwoNodes.deliver(opened, to: &nodes.b).messages(to: window).last { $0["type"] == "reply" }
        #expect(connected?["ok"] == true, "\(String(describing: connected))")
        #expect(connected?["result"]?["connectionOptions"]?["userActivities"]?.arrayValue?.first?["title"] == "Budget")
        // The ticket is single-use on every node.
        let used = TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        _ = used
        let again = nodes.a.open()
        _ = nodes.a.send(again, "connect", ["protocol": 1, "auth": ["name": "alice"], "ticket": ticket])
        nodes.a.clock.advance(Millis(nodes.a.hub.settings.livenessProbeTimeoutMs) + 1)
        let refused = nodes.a.run(.tick).messages(to: again).last { $0["type"] == "reply" }
        #expect(refused?.errorCode == "ticket_invalid")
    }

    @Test func aTicketThatNeverArrivesFailsLikeAnUnknownOne() {
        var nodes = TwoNodes()
        let window = nodes.b.open()
        _ = nodes.b.send(window, "connect", ["protocol": 1, "auth": ["name": "alice"], "ticket": "tkt_nowhere"])
        nodes.b.clock.advance(Millis(nodes.b.hub.settings.livenessProbeTimeoutMs) + 1)
        let reply = nodes.b.run(.tick).messages(to: window).last { $0["type"] == "reply" }
        #expect(reply?.errorCode == "ticket_invalid")
    }

    @Test func bringingForwardAWindowLiveOnAnotherNodeActivatesItThere() {
        var nodes = TwoNodes()
        let (window, first) = nodes.a.connect()
        let saved = nodes.a.send(window, "updateActivity", ["activity": Self.budget])
        TwoNodes.deliver(nodes.a.effects + saved, to: &nodes.b)
        let (other, _) = nodes.b.connect()
        let asked = nodes.b.send(other, "requestActivation", ["activity": Self.budget])
        let reply = asked.messages(to: other).last { $0["type"] == "reply" }
        #expect(reply?["result"]?["action"] == "activated")
        #expect(reply?["result"]?["session"] == first["session"]?["persistentIdentifier"])
        let told = TwoNodes.deliver(asked, to: &nodes.a).events(to: window, named: "activate")
        #expect(told.count == 1)
        #expect(told.first?["activity"]?["targetContentIdentifier"] == "doc_budget")
    }

    @Test func aRefreshOfAWindowLiveOnAnotherNodeIsAppliedByItsHolder() throws {
        var nodes = TwoNodes()
        let (window, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (requester, _) = nodes.b.connect()
        let session = first["session"]?["persistentIdentifier"] ?? .null
        let asked = nodes.b.send(requester, "requestRefresh", ["session": session, "title": "Budget", "activity": Self.budget])
        #expect(asked.messages(to: requester).last { $0["type"] == "reply" }?["ok"] == true)
        #expect(asked.persisted.isEmpty, "b does not write a session that a holds")
        let applied = TwoNodes.deliver(asked, to: &nodes.a)
        let event = applied.events(to: window, named: "sessionRefreshed").first
        #expect(event?["title"] == "Budget")
        #expect(event?["activity"]?["targetContentIdentifier"] == "doc_budget")
        let stored = try nodes.a.store.loadState().sessions.first { $0.id.rawValue == session.stringValue }
        #expect(stored?.title == "Budget")
    }
}

/// Presence reaches the document's scenes on every node, and a dead node's scenes leave.
@Suite struct ClusterPresenceTests {
    @Test func presenceCrossesNodesAndADeadNodesScenesLeave() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        let shared = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]])
        let seen = TwoNodes.deliver(shared, to: &nodes.b).events(to: onB, named: "presence")
        #expect(seen.count == 1)
        #expect(seen.first?["selection"] == ["anchor": 1, "head": 3])
        #expect(seen.first?["user"] == "alice")
        // A scene that opens the document later on b sees a's presence in its reply.
        let (later, _) = nodes.b.connect(name: "carol")
        let opened = nodes.b.openDocument(later, document)
        #expect(opened["result"]?["presence"]?.arrayValue?.contains { $0["user"] == "alice" } == true)
        // a dies: its scene leaves b's documents.
        let gone = nodes.b.run(.notice(.nodesExpired([NodeID("a")]))).events(to: onB, named: "presence")
        #expect(gone.first?["left"] == true)
        let reopened = nodes.b.connect(name: "dave").0
        #expect(nodes.b.openDocument(reopened, document)["result"]?["presence"]?.arrayValue?.isEmpty == true)
    }

    /// A document deleted while scenes on both nodes share presence in it: they leave it
    /// without a `left` (it is gone under them), so each node forgets the other's presence in
    /// it with the document, here and where the deletion is read, and a presence read after the
    /// deletion is not kept. (Kept, each stayed for as long as its node lived.)
    @Test func presenceInADeletedDocumentIsForgottenWithIt() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello")
        let id = DocumentID(document)
        TwoNodes.deliver(nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]]),
                         to: &nodes.b)
        TwoNodes.deliver(nodes.b.send(onB, "setPresence", ["document": .string(document), "selection": ["anchor": 2, "head": 2]]),
                         to: &nodes.a)
        #expect(nodes.b.hub.cluster.remotePresence[id]?.count == 1 && nodes.a.hub.cluster.remotePresence[id]?.count == 1)
        // a's window moves again; b deletes the document before it reads that.
        nodes.a.clock.advance(Millis(nodes.a.hub.settings.presenceIntervalMs))
        let late = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 4, "head": 4]])
        let deleted = nodes.b.send(onB, "deleteDocument", ["document": .string(document)])
        #expect(deleted.messages(to: onB).last { $0["type"] == "reply" }?["ok"] == true)
        #expect(nodes.b.hub.cluster.remotePresence.isEmpty, "the deleted document's presence was kept")
        TwoNodes.deliver(late, to: &nodes.b)
        #expect(nodes.b.hub.cluster.remotePresence.isEmpty, "a presence read after the deletion was kept")
        TwoNodes.deliver(deleted, to: &nodes.a)
        #expect(nodes.a.hub.documents.records[id] == nil, "a read the deletion")
        #expect(nodes.a.hub.cluster.remotePresence.isEmpty, "b's presence in the deleted document was kept")
    }

    @Test func presenceReadAfterItsNodeExpiredIsNotKept() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        let shared = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]])
        // b learns that a is gone before it reads a's last signal (its listener was behind).
        _ = nodes.b.run(.notice(.nodesExpired([NodeID("a")])))
        #expect(TwoNodes.deliver(shared, to: &nodes.b).events(to: onB, named: "presence").isEmpty)
        let (later, _) = nodes.b.connect(name: "carol")
        #expect(nodes.b.openDocument(later, document)["result"]?["presence"]?.arrayValue?.isEmpty == true)
        // a renewed late after all (it was only slow): its scenes' presence is taken again.
        _ = nodes.b.run(.notice(.nodesExpired([])))
        nodes.a.clock.advance(Millis(nodes.a.hub.settings.presenceIntervalMs))  // not held
        let again = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 2, "head": 2]])
        #expect(TwoNodes.deliver(again, to: &nodes.b).events(to: onB, named: "presence").count == 1)
    }
}

@Suite struct ClusterClaimRaceTests {
    @Test func aConnectThatLostTheClaimAsksTheWinnerOnceItIsKnown() {
        // Both nodes get a connect for the free session; a's claim lands first.
        var (nodes, first, onA, onB) = ClusterLeaseTests.racingReloads()
        _ = nodes.a.completeCommits()
        nodes.b.completesCommits = true
        // b's claim conflicts; reading the records it learns a holds the session and asks it.
        let lost = nodes.b.completeCommits()
        let asked = lost.compactMap { effect -> NodeSignal? in if case .signal(let s) = effect { s } else { nil } }
        #expect(asked.contains { $0.kind == .probe(SessionID(first["session"]?["persistentIdentifier"]?.stringValue ?? "")) })
        // a's window answers: b forks at once.
        let pinged = TwoNodes.deliver(lost, to: &nodes.a)
        #expect(pinged.probes == [onA])
        let reply = TwoNodes.deliver(nodes.a.run(.pong(onA)), to: &nodes.b).messages(to: onB).last { $0["type"] == "reply" }
        #expect(reply?["result"]?["forkedFrom"] == first["session"]?["persistentIdentifier"])
    }
}

/// A window duplicated through one node while its session is live on another: the holder is
/// asked, its window answers, the duplicate forks. Every later duplicate is asked about again,
/// at once, not after the holder's lease (a `.live` answer used to leave the session marked
/// as asked, so the next duplicate waited `nodeLeaseMs` and a node check before forking).
@Suite struct ClusterDuplicateTests {
    /// Connects a duplicate of `first`'s window through b; returns its connection and what b did.
    static func duplicate(_ first: JSONValue, on nodes: inout TwoNodes) -> (ConnectionID, [Effect]) {
        let connection = nodes.b.open()
        return (connection, nodes.b.send(connection, "connect", ClusterLeaseTests.resume(first)))
    }

    static func asked(_ effects: [Effect], about first: JSONValue) -> Bool {
        let session = SessionID(first["session"]?["persistentIdentifier"]?.stringValue ?? "")
        return effects.contains { effect in
            if case .signal(let signal) = effect { signal.kind == .probe(session) } else { false }
        }
    }

    @Test func everyDuplicateOfAWindowLiveOnAnotherNodeAsksItsHolder() {
        var nodes = TwoNodes()
        let (onA, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        for round in 1...2 {
            let (duplicate, effects) = Self.duplicate(first, on: &nodes)
            #expect(Self.asked(effects, about: first), "duplicate \(round): b asks a at once")
            let pinged = TwoNodes.deliver(effects, to: &nodes.a)
            #expect(pinged.probes == [onA], "duplicate \(round): a pings its window")
            let answered = TwoNodes.deliver(nodes.a.run(.pong(onA)), to: &nodes.b)
            let reply = answered.messages(to: duplicate).last { $0["type"] == "reply" }
            #expect(reply?["result"]?["forkedFrom"] == first["session"]?["persistentIdentifier"],
                    "duplicate \(round) forks when a's window answers: \(String(describing: reply))")
        }
    }

    @Test func aDuplicateThatLeftBeforeTheAnswerLeavesTheNextOneToAskAgain() {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (gone, effects) = Self.duplicate(first, on: &nodes)
        #expect(Self.asked(effects, about: first))
        _ = nodes.b.run(.closed(gone, abnormal: true))
        let (_, again) = Self.duplicate(first, on: &nodes)
        #expect(Self.asked(again, about: first), "the next duplicate asks again")
    }
}

/// Drag from a window on one node onto a window, or the new-window zone, through another.
@Suite struct ClusterDragTests {
    static let item: JSONValue = ["activity": ["activityType": "panes.document", "title": "Notes",
                                               "targetContentIdentifier": "doc_notes"], "operations": ["copy", "move"]]

    /// Begins a drag of `item` from `source` on node a, and lets node b hear of it.
    static func beginDrag(on nodes: inout TwoNodes, from source: ConnectionID) -> JSONValue {
        let began = nodes.a.send(source, "beginDrag", ["items": [item]])
        TwoNodes.deliver(began, to: &nodes.b)
        return began.messages(to: source).last { $0["type"] == "reply" }?["result"]?["drag"] ?? .null
    }

    @Test func aDragFromOneNodeDropsOntoAWindowOnAnother() {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        let (target, _) = nodes.b.connect()
        let drag = Self.beginDrag(on: &nodes, from: source)
        let dropped = nodes.b.send(target, "drop", ["drag": drag, "target": "scene", "operation": "move"])
        let reply = dropped.messages(to: target).last { $0["type"] == "reply" }
        #expect(reply?["result"]?["items"]?.arrayValue?.first?["title"] == "Notes", "\(String(describing: reply))")
        // The source, on a, hears how its drag ended.
        let ended = TwoNodes.deliver(dropped, to: &nodes.a).events(to: source, named: "dragEnded")
        #expect(ended.first?["outcome"] == "dropped")
        #expect(ended.first?["operation"] == "move")
        // A second drop, on a, is told it was dropped already.
        let (other, _) = nodes.a.connect()
        #expect(nodes.a.request(other, "drop", ["drag": drag, "target": "scene"]).errorCode == "drag_already_dropped")
    }

    /// The switcher lists windows live on other nodes; a drop naming one reaches it through its
    /// node, as a drop onto another window of the same node does.
    @Test func aDropOntoAWindowLiveOnAnotherNodeReachesItThroughItsNode() {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (target, connected) = nodes.b.connect()
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        let scene = connected["scene"] ?? .null
        let drag = Self.beginDrag(on: &nodes, from: source)
        let dropped = nodes.a.send(source, "drop", ["drag": drag, "target": "scene", "scene": scene, "operation": "copy"])
        // b delivers the items to its window, once, and says so (`ClusterRemoteDropTests`).
        let onB = TwoNodes.deliver(dropped, to: &nodes.b)
        let received = onB.events(to: target, named: "itemsDropped")
        #expect(received.count == 1)
        #expect(received.first?["items"]?.arrayValue?.first?["title"] == "Notes")
        #expect(received.first?["operation"] == "copy")
        let answered = TwoNodes.deliver(onB, to: &nodes.a)
        let reply = answered.messages(to: source).last { $0["type"] == "reply" }
        #expect(reply?["result"]?["delivered"] == scene, "\(String(describing: reply))")
        let ended = answered.events(to: source, named: "dragEnded")
        #expect(ended.first?["target"]?["session"] == connected["session"]?["persistentIdentifier"])
        // A scene nobody has live anywhere is still not found.
        let second = Self.beginDrag(on: &nodes, from: source)
        #expect(nodes.a.request(source, "drop", ["drag": second, "target": "scene", "scene": "scn_nobody"]).errorCode
                == "scene_not_found")
    }

    /// A drop through another node in the last moment and the expiry on the drag's own node:
    /// the store orders them, and the source hears of exactly one.
    @Test(arguments: [true, false])
    func aLastMomentDropAndTheExpiryAreNotBothReported(dropFirst: Bool) {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        let (target, _) = nodes.b.connect()
        let drag = Self.beginDrag(on: &nodes, from: source)
        let lifetime = Millis(nodes.a.hub.settings.dragLifetimeMs)
        // b's clock is a little behind a's: its drop is in time by its own clock.
        nodes.b.clock.advance(lifetime - 10)
        nodes.a.clock.advance(lifetime + 10)
        nodes.b.completesCommits = false
        var dropped = nodes.b.send(target, "drop", ["drag": drag, "target": "scene", "operation": "copy"])
        if dropFirst { dropped += nodes.b.completeCommits() }
        let expired = nodes.a.run(.tick)
        if !dropFirst { dropped += nodes.b.completeCommits() }
        // Each node hears the other's signals only now.
        let heardOnA = TwoNodes.deliver(dropped, to: &nodes.a)
        TwoNodes.deliver(expired, to: &nodes.b)
        let ended = (expired + heardOnA).events(to: source, named: "dragEnded")
        #expect(ended.count == 1, "\(ended)")
        #expect(ended.first?["outcome"] == (dropFirst ? "dropped" : "cancelled"))
        let reply = dropped.messages(to: target).last { $0["type"] == "reply" }
        if dropFirst {
            #expect(reply?["ok"] == true, "\(String(describing: reply))")
        } else {
            // b cannot tell the expiry from another drop when its own is refused.
            #expect(["drag_not_found", "drag_already_dropped"].contains(reply?.errorCode), "\(String(describing: reply))")
        }
    }

    @Test func twoDropsOfOneDragOnTwoNodesInTheSameInstantDeliverItOnce() {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        let (onA, _) = nodes.a.connect()
        let (onB, _) = nodes.b.connect()
        let drag = Self.beginDrag(on: &nodes, from: source)
        // Both nodes take their drop before either hears of the other's.
        nodes.a.completesCommits = false
        nodes.b.completesCommits = false
        // (Connection numbers are per node: each node's effects are looked at apart.)
        var onNodeA = nodes.a.send(onA, "drop", ["drag": drag, "target": "scene"])
        var onNodeB = nodes.b.send(onB, "drop", ["drag": drag, "target": "newWindow"])
        onNodeA += nodes.a.completeCommits()
        onNodeB += nodes.b.completeCommits()
        let replies = [onNodeA.messages(to: onA), onNodeB.messages(to: onB)].compactMap { $0.last { $0["type"] == "reply" } }
        #expect(replies.count == 2)
        #expect(replies.filter { $0["ok"] == true }.count == 1, "exactly one drop wins: \(replies)")
        #expect(replies.compactMap(\.errorCode) == ["drag_already_dropped"])
        // The winner (a, whose commit went first) delivered; b opened no window.
        #expect(replies.first?["ok"] == true)
        #expect(!onNodeB.contains { if case .persist = $0 { true } else { false } }, "b made no session for a window")
        // The source hears of one ending, once.
        let ended = (onNodeA + TwoNodes.deliver(onNodeB, to: &nodes.a)).events(to: source, named: "dragEnded")
        #expect(ended.count == 1)
    }

    @Test func aCancelRacingADropOnAnotherNodeEndsTheDragOnce() {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        let (onB, _) = nodes.b.connect()
        let drag = Self.beginDrag(on: &nodes, from: source)
        nodes.a.completesCommits = false
        nodes.b.completesCommits = false
        var onNodeB = nodes.b.send(onB, "drop", ["drag": drag, "target": "scene"])
        var onNodeA = nodes.a.send(source, "cancelDrag", ["drag": drag])
        onNodeB += nodes.b.completeCommits()
        onNodeA += nodes.a.completeCommits()
        #expect(onNodeB.messages(to: onB).last { $0["type"] == "reply" }?["ok"] == true)
        #expect(onNodeA.messages(to: source).last { $0["type"] == "reply" }?.errorCode == "drag_already_dropped")
        let ended = (onNodeA + TwoNodes.deliver(onNodeB, to: &nodes.a)).events(to: source, named: "dragEnded")
        #expect(ended.map { $0["outcome"] } == ["dropped"])
    }

    @Test func aDragDroppedOnTheNewWindowZoneThroughAnotherNodeOpensAWindowAnywhere() {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        let (dropper, _) = nodes.b.connect()
        let drag = Self.beginDrag(on: &nodes, from: source)
        let dropped = nodes.b.send(dropper, "drop", ["drag": drag, "target": "newWindow"])
        let ticket = dropped.messages(to: dropper).last { $0["type"] == "reply" }?["result"]?["windows"]?.arrayValue?.first?["ticket"]
        #expect(ticket != nil)
        // The new window's connect reaches a: the ticket and its session are known there.
        TwoNodes.deliver(dropped, to: &nodes.a)
        let window = nodes.a.open()
        let reply = nodes.a.send(window, "connect", ["protocol": 1, "auth": ["name": "alice"], "ticket": ticket ?? .null])
            .messages(to: window).last { $0["type"] == "reply" }
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["connectionOptions"]?["userActivities"]?.arrayValue?.first?["title"] == "Notes")
    }
}
