@_spi(Testing) @testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A user with windows on two nodes sees every one of them live in either window's switcher,
/// with the state, scene and traits its own node gives (`Hub+RemoteScenes.swift`).
@Suite struct ClusterRemoteScenesTests {
    static func entry(_ list: JSONValue?, _ session: JSONValue?) -> JSONValue? {
        list?["sessions"]?.arrayValue?.first { $0["persistentIdentifier"] == session }
    }

    /// Lets `sceneShareIntervalMs` pass on a node: what it had held back goes now.
    static func intervalPasses(on node: inout HubHarness) -> [Effect] {
        node.clock.advance(Millis(Settings().sceneShareIntervalMs))
        return node.run(.tick)
    }

    @Test func aWindowLiveOnAnotherNodeShowsInTheSwitcherAsItsNodeReportsIt() {
        var nodes = TwoNodes()
        let (onA, first) = nodes.a.connect()
        let session = first["session"]?["persistentIdentifier"]
        _ = nodes.a.request(onA, "lifecycle", ["visible": true, "focused": true])
        _ = Self.intervalPasses(on: &nodes.a)
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (onB, _) = nodes.b.connect()
        _ = nodes.b.request(onB, "lifecycle", ["visible": true, "focused": false])
        let listed = nodes.b.request(onB, "listSessions", ["watch": true])["result"]
        let entry = Self.entry(listed, session)
        #expect(entry?["state"] == "foregroundActive", "\(String(describing: listed))")
        #expect(entry?["scene"] == first["scene"])
        #expect(entry?["traits"] == ["width": "regular", "pointer": "fine"])
        #expect(listed?["appState"] == "foregroundActive", "the window on a is the user's frontmost")

        // a's window goes to the background, then changes its traits: b's switcher hears both.
        let hidden = nodes.a.send(onA, "lifecycle", ["visible": false, "focused": false]) + Self.intervalPasses(on: &nodes.a)
        var told = TwoNodes.deliver(hidden, to: &nodes.b).events(to: onB, named: "sessionsChanged")
        #expect(Self.entry(told.last, session)?["state"] == "background")
        #expect(told.last?["appState"] == "foregroundInactive")
        let narrowed = nodes.a.send(onA, "updateTraits", ["traits": ["width": "compact"]]) + Self.intervalPasses(on: &nodes.a)
        told = TwoNodes.deliver(narrowed, to: &nodes.b).events(to: onB, named: "sessionsChanged")
        #expect(Self.entry(told.last, session)?["traits"]?["width"] == "compact")

        // The window closes: disconnected on b too, as on one node.
        let closed = nodes.a.run(.closed(onA, abnormal: false)) + Self.intervalPasses(on: &nodes.a)
        told = TwoNodes.deliver(closed, to: &nodes.b).events(to: onB, named: "sessionsChanged")
        #expect(Self.entry(told.last, session)?["state"] == "disconnected")
        #expect(Self.entry(told.last, session)?["scene"] == nil)
        #expect(Self.entry(told.last, session)?["traits"] == nil)
    }

    /// A node's list of live windows read after its lease ran out (this node's listener far
    /// behind) is not kept: that node's windows went with it (`dropRemoteScenes`), and nothing
    /// would drop the entry again (it stayed for good, one per user the gone node told of).
    @Test func windowsToldByANodeReadAfterItsLeaseEndedAreNotKept() {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        #expect(nodes.b.hub.cluster.remoteScenes.count == 1, "b keeps a's window")
        // a tells of a change, which b reads only after a was found gone.
        let late = nodes.a.send(onA, "lifecycle", ["visible": true, "focused": true]) + Self.intervalPasses(on: &nodes.a)
        #expect(late.contains { if case .signal(let s) = $0, case .scenes = s.kind { true } else { false } })
        _ = nodes.b.run(.notice(.nodesExpired([NodeID("a")])))
        #expect(nodes.b.hub.cluster.remoteScenes.isEmpty, "a's windows went with its lease")
        TwoNodes.deliver(late, to: &nodes.b)
        #expect(nodes.b.hub.cluster.remoteScenes.isEmpty, "a late list of a gone node's windows was kept")
    }

    /// Each signal lists every live window of the user on its node: one per connect made a
    /// burst of N connects cost N lists of up to N windows on every node (10,000 windows of one
    /// user stalled a node's connects after ~4,000). The first change goes at once, the rest of
    /// the interval's changes in one list when it ends, and nothing is left out.
    @Test func aBurstOfConnectsOfOneUserIsToldInOneListPerInterval() {
        var nodes = TwoNodes()
        let (onB, _) = nodes.b.connect()
        _ = nodes.b.request(onB, "listSessions", ["watch": true])
        var sessions: [JSONValue] = []
        for _ in 0..<50 {
            let (_, reply) = nodes.a.connect(["state": ["visible": true, "focused": false]])
            sessions.append(reply["session"]?["persistentIdentifier"] ?? .null)
        }
        func lists(_ effects: [Effect]) -> [Int] {
            effects.compactMap {
                guard case .signal(let signal) = $0, case .scenes(let json) = signal.kind else { return nil }
                return json["scenes"]?.arrayValue?.count
            }
        }
        let burst = nodes.a.effects
        #expect(lists(burst) == [1], "the first connect is told at once, the other 49 wait for the interval")
        nodes.a.clock.advance(Millis(Settings().sceneShareIntervalMs) - 1)
        #expect(lists(nodes.a.run(.tick)).isEmpty, "not before the interval")
        let ended = Self.intervalPasses(on: &nodes.a)
        #expect(lists(ended) == [50], "then every window in one list")
        #expect(lists(Self.intervalPasses(on: &nodes.a)).isEmpty, "and nothing more while nothing changes")

        TwoNodes.deliver(burst + ended, to: &nodes.b)
        let listed = nodes.b.request(onB, "listSessions")["result"]
        for session in sessions {
            #expect(Self.entry(listed, session)?["state"] == "foregroundInactive")
        }
    }

    /// A draining node may be gone before the interval ends: what it tells goes at once.
    @Test func aDrainingNodeTellsAtOnce() {
        var nodes = TwoNodes()
        // The first window is told at once; the second waits for the interval.
        let (first, _) = nodes.a.connect()
        _ = nodes.a.connect()
        let drained = nodes.a.run(.drain)
        let closed = nodes.a.run(.closed(first, abnormal: false))
        let told = (drained + closed).compactMap { effect -> Int? in
            guard case .signal(let signal) = effect, case .scenes(let json) = signal.kind else { return nil }
            return json["scenes"]?.arrayValue?.count
        }
        #expect(told == [1], "the first left and the second is live: told without waiting for the interval: \(told)")
    }

    @Test func aWindowThatConnectsOnAnotherNodeTurnsLiveInAnOpenSwitcher() {
        var nodes = TwoNodes()
        let (onB, _) = nodes.b.connect()
        _ = nodes.b.request(onB, "listSessions", ["watch": true])
        let (_, first) = nodes.a.connect(["state": ["visible": true, "focused": true]])
        let told = TwoNodes.deliver(nodes.a.effects, to: &nodes.b).events(to: onB, named: "sessionsChanged")
        #expect(Self.entry(told.last, first["session"]?["persistentIdentifier"])?["state"] == "foregroundActive")
    }

    @Test func aNodeThatMissedTheSignalsAsksForThemAndShowsLiveMeanwhile() {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect(["state": ["visible": true, "focused": false]])
        let session = first["session"]?["persistentIdentifier"]
        // b heard nothing (its listener was down); then it is back.
        let resubscribed = nodes.b.run(.notice(.resubscribed))
        let (onB, _) = nodes.b.connect()
        let meanwhile = Self.entry(nodes.b.request(onB, "listSessions")["result"], session)
        #expect(meanwhile?["state"] == "background", "claimed by a live node: live, its state not known yet")
        #expect(meanwhile?["scene"] == nil)
        // a answers b's question; b's switcher now has what a reports.
        let answered = TwoNodes.deliver(resubscribed, to: &nodes.a)
        TwoNodes.deliver(answered, to: &nodes.b)
        let known = Self.entry(nodes.b.request(onB, "listSessions")["result"], session)
        #expect(known?["state"] == "foregroundInactive")
        #expect(known?["scene"] == first["scene"])
    }

    /// A third node on the same store as `nodes`.
    static func thirdNode(of nodes: TwoNodes) -> HubHarness {
        HubHarness(stored: try! nodes.a.store.loadState(), store: nodes.a.store, node: NodeID("c"),
                   ids: .sequential(from: 2 << 40))
    }

    static func sceneLists(_ effects: [Effect]) -> [(to: NodeID?, count: Int)] {
        effects.compactMap {
            guard case .signal(let signal) = $0, case .scenes(let json) = signal.kind else { return nil }
            return (signal.to, json["scenes"]?.arrayValue?.count ?? 0)
        }
    }

    /// The answer to one node's question goes to that node alone: a change still waiting for
    /// its interval is told to every node when the interval ends, not taken as told by the
    /// answer (a third node never heard of the second window).
    @Test func aShareStillDueWhenAnotherNodeAskedReachesEveryNode() {
        var nodes = TwoNodes()
        var c = Self.thirdNode(of: nodes)
        let (_, first) = nodes.a.connect(["state": ["visible": true, "focused": false]])
        let (_, second) = nodes.a.connect(["state": ["visible": true, "focused": false]])
        TwoNodes.deliver(nodes.a.effects, to: &c)
        let (onC, _) = c.connect()
        _ = c.request(onC, "listSessions", ["watch": true])
        // The second window waits for the interval; meanwhile b asks and a answers b alone.
        let answered = TwoNodes.deliver(nodes.b.run(.notice(.resubscribed)), to: &nodes.a)
        #expect(Self.sceneLists(answered).map(\.to) == [NodeID("b")])
        #expect(Self.sceneLists(answered).map(\.count) == [2])
        let ended = Self.intervalPasses(on: &nodes.a)
        #expect(Self.sceneLists(ended).map(\.to) == [nil], "the share still due goes to every node")
        let told = TwoNodes.deliver(ended, to: &c).events(to: onC, named: "sessionsChanged")
        let entry = Self.entry(told.last, second["session"]?["persistentIdentifier"])
        #expect(entry?["scene"] == second["scene"], "\(String(describing: told.last))")
        #expect(entry?["state"] == "foregroundInactive")
        #expect(Self.entry(told.last, first["session"]?["persistentIdentifier"])?["scene"] == first["scene"])
    }

    /// A node whose listener was down missed the empty list of a user whose window elsewhere
    /// closed (its release not written yet: the store refused it for now). Asking again, it
    /// no longer lists the closed window with its scene and state, nor sends drops to it.
    @Test func aWindowThatClosedWhileANodeWasNotListeningLeavesItsSwitcherWhenItAsksAgain() {
        var nodes = TwoNodes()
        let (onA, first) = nodes.a.connect(["state": ["visible": true, "focused": true]])
        let session = first["session"]?["persistentIdentifier"]
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (onB, _) = nodes.b.connect()
        _ = nodes.b.request(onB, "listSessions", ["watch": true])
        #expect(Self.entry(nodes.b.request(onB, "listSessions")["result"], session)?["scene"] == first["scene"])
        // The window closes; b's listener is down, and a's release waits for the store.
        nodes.a.completesCommits = false
        let closed = nodes.a.run(.closed(onA, abnormal: false)) + Self.intervalPasses(on: &nodes.a)
        #expect(Self.sceneLists(closed).map(\.count) == [0], "a told every node, b did not hear")
        // b's listener is back: it asks, and a answers with nothing for alice.
        let asked = nodes.b.run(.notice(.resubscribed))
        let told = asked.events(to: onB, named: "sessionsChanged")
        #expect(Self.entry(told.last, session)?["scene"] == nil, "\(String(describing: told.last))")
        #expect(Self.entry(told.last, session)?["state"] != "foregroundActive")
        let answered = TwoNodes.deliver(asked, to: &nodes.a)
        #expect(Self.sceneLists(answered).isEmpty)
        let listed = Self.entry(nodes.b.request(onB, "listSessions")["result"], session)
        #expect(listed?["scene"] == nil)
        #expect(listed?["state"] != "foregroundActive")
        #expect(nodes.b.hub.remoteLive(SceneID(first["scene"]?.stringValue ?? ""), of: OwnerKey(workspace: "default", user: "alice")) == nil,
                "a drop onto the closed window is not sent to a")
    }

    /// b asked while a's listener was down: a never heard the question. When a's listener is
    /// back, a tells every node its lists again, so b learns a's window.
    @Test func aNodeWhoseListenerWasDownTellsItsListsAgainWhenItIsBack() {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect(["state": ["visible": true, "focused": false]])
        let session = first["session"]?["persistentIdentifier"]
        // b heard nothing of it; b asks, and a, not listening either, does not hear that.
        _ = nodes.b.run(.notice(.resubscribed))
        let (onB, _) = nodes.b.connect()
        #expect(Self.entry(nodes.b.request(onB, "listSessions")["result"], session)?["scene"] == nil)
        // a's listener is back.
        let back = nodes.a.run(.notice(.resubscribed))
        #expect(Self.sceneLists(back).map(\.to) == [nil])
        #expect(Self.sceneLists(back).map(\.count) == [1], "one list per user")
        TwoNodes.deliver(back, to: &nodes.b)
        let known = Self.entry(nodes.b.request(onB, "listSessions")["result"], session)
        #expect(known?["scene"] == first["scene"])
        #expect(known?["state"] == "foregroundInactive")
    }

    @Test func aDeadNodesWindowsLeaveTheSwitcher() {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect(["state": ["visible": true, "focused": true]])
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (onB, _) = nodes.b.connect()
        _ = nodes.b.request(onB, "listSessions", ["watch": true])
        let told = nodes.b.run(.notice(.nodesExpired([NodeID("a")]))).events(to: onB, named: "sessionsChanged")
        #expect(Self.entry(told.last, first["session"]?["persistentIdentifier"])?["state"] == "disconnected")
        #expect(told.last?["appState"] == "unattached")
    }

    @Test func aSwitcherHearsWhenTheStoreSaysAWindowElsewhereWasLetGo() throws {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect()
        let session = SessionID(try #require(first["session"]?["persistentIdentifier"]?.stringValue))
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (onB, _) = nodes.b.connect()
        _ = nodes.b.request(onB, "listSessions", ["watch": true])
        // a says it has no scene for the user any more, before b reads that a let the session go:
        // live for all b knows (its claim), state unknown.
        let owner = OwnerKey(workspace: "default", user: "alice")
        let gone = NodeSignal(from: NodeID("a"), to: nil, kind: .scenes(RemoteScene.json(owner: owner, [:])))
        var told = nodes.b.run(.notice(.signal(gone))).events(to: onB, named: "sessionsChanged")
        #expect(Self.entry(told.last, first["session"]?["persistentIdentifier"])?["state"] == "background")
        // The release alone (no change to the session's record) still reaches the switcher.
        let epoch = try #require(try nodes.a.store.loadState().claims[session]).epoch
        _ = try nodes.a.store.apply([.commit(Commit(id: CommitID(999), channel: .coordination(.session(session)), base: epoch,
                                                    commands: [.coordination(.claimSession(session, SessionClaim(node: nil, epoch: epoch)))]))])
        told = nodes.b.run(.notice(.records(cursor: .max))).events(to: onB, named: "sessionsChanged")
        #expect(Self.entry(told.last, first["session"]?["persistentIdentifier"])?["state"] == "disconnected")
    }
}
