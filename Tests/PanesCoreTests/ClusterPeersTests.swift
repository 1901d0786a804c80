@_spi(Testing) @testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A node alone builds no lists for nobody (a user's live scenes, its people in a document),
/// yet a node that joins, or that it hears of late, is told them as they are, and every
/// change after (`Hub+Peers.swift`). Hubs on one memory store, the listener's notices handed
/// over by the test.
@Suite struct ClusterPeersTests {
    static let alice = OwnerKey(workspace: "default", user: "alice")

    static func lists(_ effects: [Effect]) -> [(to: NodeID?, count: Int)] {
        ClusterRemoteScenesTests.sceneLists(effects)
    }

    static func people(_ effects: [Effect]) -> [NodeID?] {
        effects.compactMap {
            guard case .signal(let signal) = $0, case .people = signal.kind else { return nil }
            return signal.to
        }
    }

    /// `a` alone: its listener read no other node alive.
    static func lone() -> HubHarness {
        var a = HubHarness(store: MemoryStore(), node: NodeID("a"), ids: .sequential(from: 0))
        _ = a.run(.notice(.nodesAlive([NodeID("a")], readBegan: 0)))
        return a
    }

    /// A node joining `a`'s cluster: registered, its listener subscribed (reading `a` alive),
    /// its question (`scenesWanted`) sent; returns it with what it sent.
    static func join(_ a: HubHarness, as name: String, alive: [String] = ["a"], idsFrom: Int) -> (HubHarness, [Effect]) {
        var node = HubHarness(stored: try! a.store.loadState(), store: a.store, node: NodeID(name),
                              ids: .sequential(from: idsFrom))
        let sent = node.run(.notice(.nodesAlive((alive + [name]).map(NodeID.init), readBegan: 0))) + node.run(.notice(.resubscribed))
        return (node, sent)
    }

    static func switcher(_ node: inout HubHarness, _ connection: ConnectionID, _ session: JSONValue?) -> JSONValue? {
        ClusterRemoteScenesTests.entry(node.request(connection, "listSessions")["result"], session)
    }

    @Test func aLoneNodeBuildsNoListsAndTellsAJoiningNodeThemAsTheyAreThenEveryChange() {
        var a = Self.lone()
        let (onA, first) = a.connect(["state": ["visible": true, "focused": false]])
        let session = first["session"]?["persistentIdentifier"]
        _ = a.send(onA, "lifecycle", ["visible": true, "focused": true])
        _ = ClusterRemoteScenesTests.intervalPasses(on: &a)
        #expect(Self.lists(a.effects).isEmpty, "alone, a built a list for nobody")
        #expect(a.hub.cluster.sharedScenes.isEmpty)

        // b registers and asks; before a hears the question, a's window changes again.
        var (b, asked) = Self.join(a, as: "b", idsFrom: 1 << 40)
        let before = a.send(onA, "updateTraits", ["traits": ["width": "compact"]]) + ClusterRemoteScenesTests.intervalPasses(on: &a)
        #expect(Self.lists(before).isEmpty, "a has not heard of b yet")
        let answered = TwoNodes.deliver(asked, to: &a)
        #expect(Self.lists(answered).map(\.count) == [1], "one list of alice's windows, not two")
        TwoNodes.deliver(answered, to: &b)
        let (onB, _) = b.connect()
        _ = b.request(onB, "listSessions", ["watch": true])
        var listed = Self.switcher(&b, onB, session)
        #expect(listed?["state"] == "foregroundActive", "\(String(describing: listed))")
        #expect(listed?["scene"] == first["scene"])
        #expect(listed?["traits"]?["width"] == "compact", "the change made just before a heard b")

        // Just after: a tells every change.
        let after = a.send(onA, "lifecycle", ["visible": false, "focused": false]) + ClusterRemoteScenesTests.intervalPasses(on: &a)
        #expect(Self.lists(after).map(\.to) == [nil])
        TwoNodes.deliver(after, to: &b)
        listed = Self.switcher(&b, onB, session)
        #expect(listed?["state"] == "background")
        let closed = a.run(.closed(onA, abnormal: false)) + ClusterRemoteScenesTests.intervalPasses(on: &a)
        TwoNodes.deliver(closed, to: &b)
        listed = Self.switcher(&b, onB, session)
        #expect(listed?["state"] == "disconnected")
        #expect(listed?["scene"] == nil)
    }

    /// b asked while a's listener was down: a never heard the question. Back, a's listener
    /// reads b alive (`nodesAlive` before `resubscribed`), and a tells b its lists.
    @Test func aLoneNodeThatMissedAJoiningNodesQuestionTellsItOnceItsListenerIsBack() {
        var a = Self.lone()
        let (_, first) = a.connect(["state": ["visible": true, "focused": true]])
        let session = first["session"]?["persistentIdentifier"]
        var (b, _) = Self.join(a, as: "b", idsFrom: 1 << 40)
        let (onB, _) = b.connect()
        #expect(Self.switcher(&b, onB, session)?["scene"] == nil, "b has not heard of a's window")
        let back = a.run(.notice(.nodesAlive([NodeID("a"), NodeID("b")], readBegan: 0))) + a.run(.notice(.resubscribed))
        #expect(!Self.lists(back).isEmpty)
        TwoNodes.deliver(back, to: &b)
        let listed = Self.switcher(&b, onB, session)
        #expect(listed?["scene"] == first["scene"])
        #expect(listed?["state"] == "foregroundActive")
    }

    /// A node heard of only through the heartbeat's read (a hub built after a rejoin never saw
    /// the questions asked while it rejoined) is told every list at once.
    @Test func aNodeKnownOnlyFromTheHeartbeatIsToldEveryList() {
        var a = Self.lone()
        let (onA, first) = a.connect(["state": ["visible": true, "focused": false]])
        let session = first["session"]?["persistentIdentifier"]
        let document = a.createDocument(onA, text: "x")
        _ = a.openDocument(onA, document)
        #expect(Self.people(a.effects).isEmpty, "alone, a told nobody its people")
        var (b, _) = Self.join(a, as: "b", idsFrom: 1 << 40)
        let beat = a.run(.notice(.nodesAlive([NodeID("a"), NodeID("b")], readBegan: 0)))
        #expect(Self.lists(beat).map(\.count) == [1])
        #expect(!Self.people(beat).isEmpty)
        TwoNodes.deliver(a.effects, to: &b)
        let (onB, _) = b.connect()
        #expect(Self.switcher(&b, onB, session)?["scene"] == first["scene"])
        let (bob, _) = b.connect(name: "bob")
        let summary = b.request(bob, "observeDocuments")["result"]?["documents"]?.arrayValue?.first
        #expect(summary?["participantCount"] == 1, "\(String(describing: summary))")
        // A read that says what a knows already changes nothing.
        #expect(Self.lists(a.run(.notice(.nodesAlive([NodeID("a"), NodeID("b")], readBegan: 0)))).isEmpty)
    }

    static func presence(_ effects: [Effect]) -> [NodeID?] {
        effects.compactMap {
            guard case .signal(let signal) = $0 else { return nil }
            switch signal.kind {
            case .presence, .presenceRetold: return signal.to
            default: return nil
            }
        }
    }

    /// A node alone whose listener comes back re-tells its scenes' presence to nobody (review
    /// of issue 27, item 4: in a failover storm the lone survivor wrote a signal per cursor in
    /// every open document each time); a node first known from the heartbeat's read is told it.
    @Test func aLoneNodeRetellsNoPresenceAndTellsANodeKnownFromTheHeartbeat() {
        var a = Self.lone()
        let (onA, _) = a.connect()
        let document = a.createDocument(onA, text: "hello")
        _ = a.openDocument(onA, document)
        _ = a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]])
        let back = a.run(.notice(.resubscribed))
        #expect(Self.presence(back).isEmpty, "alone, a re-told presence to nobody: \(Self.presence(back))")
        var (b, _) = Self.join(a, as: "b", idsFrom: 1 << 40)
        let beat = a.run(.notice(.nodesAlive([NodeID("a"), NodeID("b")], readBegan: 0)))
        #expect(Self.presence(beat) == [NodeID("b")], "\(Self.presence(beat))")
        TwoNodes.deliver(beat, to: &b)
        let (bob, _) = b.connect(name: "bob")
        let opened = b.openDocument(bob, document)["result"]?["presence"]?.arrayValue
        #expect(opened?.first { $0["user"] == "alice" }?["selection"] == ["anchor": 1, "head": 3], "\(String(describing: opened))")
    }

    /// A node alone for good (one node on a shared store) holds back only users with scenes
    /// here and documents with people here: one whose windows all closed, or a document closed,
    /// was never told to anyone and has nothing to tell (review of issue 27, item 5: both sets
    /// grew with every user who ever connected and every document ever opened).
    @Test func aLoneNodeHoldsBackOnlyWhatItHasToTell() {
        var a = Self.lone()
        let (alice, _) = a.connect(name: "alice")
        let (bob, _) = a.connect(name: "bob")
        let document = a.createDocument(alice, text: "x")
        _ = a.openDocument(alice, document)
        let owners = { (a: HubHarness) in a.hub.cluster.scenesToShare.map(\.user).sorted() }
        #expect(owners(a) == ["alice", "bob"])
        #expect(a.hub.cluster.peopleToShare == [DocumentID(document)])
        _ = a.send(alice, "closeDocument", ["document": .string(document)])
        #expect(a.hub.cluster.peopleToShare.isEmpty, "\(a.hub.cluster.peopleToShare)")
        _ = a.run(.closed(alice, abnormal: false))
        #expect(owners(a) == ["bob"])
        // What is held back is still told once a node joins: bob's one window.
        let (_, asked) = Self.join(a, as: "b", idsFrom: 1 << 40)
        let answered = TwoNodes.deliver(asked, to: &a)
        #expect(Self.lists(answered).map(\.count) == [1], "\(Self.lists(answered))")
        #expect(a.hub.cluster.scenesToShare.isEmpty)
    }

    /// A document whose people were told to b before a was alone again is still held back once
    /// empty: the empty list replaces what was told, for a node that comes later.
    @Test func aDocumentToldBeforeANodeWasAloneIsHeldBackOnceEmpty() {
        var nodes = TwoNodes()
        let (alice, _) = nodes.a.connect(name: "alice")
        let document = nodes.a.createDocument(alice, text: "x")
        let opened = nodes.a.openDocument(alice, document)
        #expect(opened["ok"] == true)
        #expect(Self.people(nodes.a.effects).contains(nil), "told to b")
        _ = nodes.a.run(.notice(.nodesExpired([NodeID("b")])))
        _ = nodes.a.send(alice, "closeDocument", ["document": .string(document)])
        #expect(nodes.a.hub.cluster.peopleToShare == [DocumentID(document)])
        let (_, asked) = Self.join(nodes.a, as: "c", idsFrom: 2 << 40)
        let answered = TwoNodes.deliver(asked, to: &nodes.a)
        #expect(Self.people(answered).contains(nil), "the empty list, to all")
        #expect(nodes.a.hub.cluster.peopleToShare.isEmpty && nodes.a.hub.cluster.peopleToldBeforeHeld.isEmpty)
    }

    /// Three nodes: b's lease ends and a is alone again (a late signal of b's does not count);
    /// c joins, and hears a's windows as they are, without b's.
    @Test func aNodeAloneAgainAfterAnotherEndedTellsAThirdThatJoinsAndNotTheGoneOne() {
        var nodes = TwoNodes()
        let (onA, first) = nodes.a.connect(["state": ["visible": true, "focused": false]])
        let onAsession = first["session"]?["persistentIdentifier"]
        let (onB, second) = nodes.b.connect(["state": ["visible": true, "focused": false]])
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let late = nodes.b.send(onB, "lifecycle", ["visible": true, "focused": true]) + ClusterRemoteScenesTests.intervalPasses(on: &nodes.b)
        #expect(!Self.lists(nodes.a.effects).isEmpty, "a told b while b ran")

        _ = nodes.a.run(.notice(.nodesExpired([NodeID("b")])))
        TwoNodes.deliver(late, to: &nodes.a)
        #expect(nodes.a.hub.cluster.peers.isEmpty, "a signal of b's read after its lease ended does not count")
        let alone = nodes.a.send(onA, "lifecycle", ["visible": true, "focused": true]) + ClusterRemoteScenesTests.intervalPasses(on: &nodes.a)
        #expect(Self.lists(alone).isEmpty, "alone again, a built no list")

        var (c, asked) = Self.join(nodes.a, as: "c", idsFrom: 2 << 40)
        _ = c.run(.notice(.nodesExpired([NodeID("b")])))
        TwoNodes.deliver(TwoNodes.deliver(asked, to: &nodes.a), to: &c)
        let (onC, _) = c.connect()
        _ = c.request(onC, "listSessions", ["watch": true])
        let listed = Self.switcher(&c, onC, onAsession)
        #expect(listed?["state"] == "foregroundActive", "\(String(describing: listed))")
        #expect(listed?["scene"] == first["scene"])
        #expect(Self.switcher(&c, onC, second["session"]?["persistentIdentifier"])?["scene"] == nil, "b's window went with b")
        let after = nodes.a.send(onA, "lifecycle", ["visible": false, "focused": false]) + ClusterRemoteScenesTests.intervalPasses(on: &nodes.a)
        TwoNodes.deliver(after, to: &c)
        #expect(Self.switcher(&c, onC, onAsession)?["state"] == "background")
    }

    /// A node alone tells nobody its people in a document; a node that joins asks and is told
    /// them, and every change after.
    @Test func aLoneNodesPeopleAreToldToAJoiningNodeThenEveryChange() {
        var a = Self.lone()
        let (alice, _) = a.connect(name: "alice")
        let document = a.createDocument(alice, text: "x")
        _ = a.openDocument(alice, document)
        _ = a.send(alice, "lifecycle", ["visible": true, "focused": true])
        #expect(Self.people(a.effects).isEmpty, "alone, a told nobody its people")
        var (b, asked) = Self.join(a, as: "b", idsFrom: 1 << 40)
        TwoNodes.deliver(TwoNodes.deliver(asked, to: &a), to: &b)
        let (bob, _) = b.connect(name: "bob")
        func people() -> JSONValue? {
            b.request(bob, "observeDocuments")["result"]?["documents"]?.arrayValue?.first?["people"]
        }
        #expect(people() == [["user": "alice", "name": "alice", "windows": 1, "active": 1]])
        let after = a.send(alice, "lifecycle", ["visible": false, "focused": false])
        #expect(Self.people(after) == [nil])
        TwoNodes.deliver(after, to: &b)
        #expect(people() == [["user": "alice", "name": "alice", "windows": 1, "active": 0]])
    }
}
