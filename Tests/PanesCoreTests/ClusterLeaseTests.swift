@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A session is live on one node at most: claims on its lease, released when the scene ends,
/// waited for while another node holds it, and taken over (with a new fencing epoch) when
/// that node's lease runs out.
@Suite struct ClusterLeaseTests {
    /// How long a connect waits for a session held on another node before it forks.
    static func leaseWait(_ node: HubHarness) -> Millis {
        Millis(node.hub.settings.nodeLeaseMs + 2 * node.hub.settings.nodeHeartbeatMs) + 1
    }

    static func resume(_ result: JSONValue) -> JSONObject {
        ["protocol": 1, "auth": ["name": "alice"], "session": HubHarness.credentials(result)]
    }

    @Test func aReloadLandingOnAnotherNodeResumesTheSession() throws {
        var nodes = TwoNodes()
        let (tab, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        // The reload reaches b before a has seen the old socket close: b waits.
        let reload = nodes.b.open()
        let early = nodes.b.send(reload, "connect", Self.resume(first))
        #expect(early.messages(to: reload).isEmpty, "held while a still holds the session")
        // a sees the old tab go; its release reaches b, which resumes.
        let closed = nodes.a.run(.closed(tab, abnormal: false))
        let resumed = TwoNodes.deliver(closed, to: &nodes.b).messages(to: reload).last { $0["type"] == "reply" }
        #expect(resumed?["ok"] == true, "\(String(describing: resumed))")
        #expect(resumed?["result"]?["created"] == false)
        #expect(resumed?["result"]?["session"]?["persistentIdentifier"] == first["session"]?["persistentIdentifier"])
        let id = SessionID(first["session"]?["persistentIdentifier"]?.stringValue ?? "")
        #expect(try nodes.b.store.loadState().claims[id] == SessionClaim(node: NodeID("b"), epoch: 2))
    }

    @Test func aDuplicatedTabOnAnotherNodeForksWhileTheOriginalIsAlive() {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let duplicate = nodes.b.open()
        _ = nodes.b.send(duplicate, "connect", Self.resume(first))
        nodes.b.clock.advance(Self.leaseWait(nodes.b))
        let reply = nodes.b.run(.tick).messages(to: duplicate).last { $0["type"] == "reply" }
        #expect(reply?["ok"] == true)
        #expect(reply?["result"]?["forkedFrom"] == first["session"]?["persistentIdentifier"])
        #expect(reply?["result"]?["created"] == true)
    }

    @Test func aDeadNodesSessionIsTakenOverWithANewEpochThatFencesTheOldHolder() throws {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let id = SessionID(first["session"]?["persistentIdentifier"]?.stringValue ?? "")
        #expect(try nodes.a.store.loadState().claims[id] == SessionClaim(node: NodeID("a"), epoch: 1))
        // a dies without a word; the reload waits on b until a's lease is found expired.
        let reload = nodes.b.open()
        _ = nodes.b.send(reload, "connect", Self.resume(first))
        let taken = nodes.b.run(.notice(.nodesExpired([NodeID("a")]))).messages(to: reload).last { $0["type"] == "reply" }
        #expect(taken?["ok"] == true, "\(String(describing: taken))")
        #expect(taken?["result"]?["session"]?["persistentIdentifier"] == .string(id.rawValue))
        #expect(try nodes.b.store.loadState().claims[id] == SessionClaim(node: NodeID("b"), epoch: 2))
        // Whatever a still sends under epoch 1 is refused by the store.
        let late = Commit(id: CommitID(999), channel: .coordination(.session(id)), base: 1,
                          commands: [.coordination(.claimSession(id, SessionClaim(node: nil, epoch: 1)))])
        #expect(try nodes.a.store.apply([.commit(late)])[CommitID(999)] == .conflict)
    }

    /// A session whose tab closed on a, and two reloads of it, one per node, both finding it
    /// free, with their claims not yet taken by the store.
    static func racingReloads() -> (nodes: TwoNodes, first: JSONValue, onA: ConnectionID, onB: ConnectionID) {
        var nodes = TwoNodes()
        let (tab, first) = nodes.a.connect()
        _ = nodes.a.run(.closed(tab, abnormal: false))
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        nodes.a.completesCommits = false
        nodes.b.completesCommits = false
        let onA = nodes.a.open()
        let onB = nodes.b.open()
        _ = nodes.a.send(onA, "connect", resume(first))
        _ = nodes.b.send(onB, "connect", resume(first))
        return (nodes, first, onA, onB)
    }

    @Test func twoNodesClaimingAtOnceNeverBothAttach() {
        var (nodes, first, onA, onB) = Self.racingReloads()
        let wonA = nodes.a.completeCommits().messages(to: onA).last { $0["type"] == "reply" }
        let lostB = nodes.b.completeCommits()
        #expect(wonA?["result"]?["created"] == false)
        #expect(lostB.messages(to: onB).isEmpty, "b lost the claim: it waits, it does not attach")
        nodes.b.clock.advance(Self.leaseWait(nodes.b))
        nodes.b.completesCommits = true
        let forked = nodes.b.run(.tick).messages(to: onB).last { $0["type"] == "reply" }
        #expect(forked?["result"]?["forkedFrom"] == first["session"]?["persistentIdentifier"])
    }

    @Test func aNodeThatLostItsLeaseClosesEveryScene() {
        var nodes = TwoNodes()
        let (tab, _) = nodes.a.connect()
        let closed = nodes.a.run(.notice(.leaseLost))
        #expect(closed.closes(tab) == [.nodeLost])
    }

    /// Before, only scenes were closed: a connection that upgraded before the runtime refused
    /// upgrades attached afterwards, while the database's lease still ran (issue 27).
    @Test func aNodeThatLostItsLeaseClosesEveryConnectionAndAttachesNothingUntilItHoldsItAgain() {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect()
        let upgraded = nodes.a.open()
        let closed = nodes.a.run(.notice(.leaseLost))
        #expect(closed.closes(upgraded) == [.nodeLost])
        // One that upgraded while the notice was on its way: closed too, and not answered.
        let late = nodes.a.open()
        let refused = nodes.a.send(late, "connect", Self.resume(first))
        #expect(refused.closes(late) == [.nodeLost])
        #expect(refused.messages(to: late).isEmpty, "\(refused.messages(to: late))")
        let fresh = nodes.a.open()
        let new = nodes.a.send(fresh, "connect", ["protocol": 1, "auth": ["name": "alice"]])
        #expect(new.closes(fresh) == [.nodeLost])
        #expect(new.messages(to: fresh).isEmpty)
        // A renewal holds the lease again: windows attach here again.
        _ = nodes.a.run(.notice(.leaseRegained))
        let again = nodes.a.open()
        let resumed = nodes.a.send(again, "connect", Self.resume(first)).messages(to: again).last { $0["type"] == "reply" }
        #expect(resumed?["ok"] == true, "\(String(describing: resumed))")
        #expect(resumed?["result"]?["created"] == false)
    }

    /// A claim whose commit was in flight when the lease was lost commits (the database's lease
    /// still ran) but attaches nothing: before, its window attached after the loss.
    @Test func aClaimThatCommitsAfterTheLeaseIsLostAttachesNothing() {
        var nodes = TwoNodes()
        let (tab, first) = nodes.a.connect()
        _ = nodes.a.run(.closed(tab, abnormal: false))
        nodes.a.completesCommits = false
        let reload = nodes.a.open()
        let claiming = nodes.a.send(reload, "connect", Self.resume(first))
        #expect(claiming.messages(to: reload).isEmpty, "the claim is in flight")
        #expect(!nodes.a.pendingCommits.isEmpty)
        let lost = nodes.a.run(.notice(.leaseLost))
        #expect(lost.closes(reload) == [.nodeLost])
        let committed = nodes.a.completeCommits()
        #expect(!committed.messages(to: reload).contains { $0["type"] == "reply" && $0["ok"] == true })
        #expect(!nodes.a.hub.scenes.isLive(SessionID(first["session"]?["persistentIdentifier"]?.stringValue ?? "")))
    }

    @Test func aConnectForASessionMadeOnAnotherNodeAMomentAgoReadsTheRecordsFirst() {
        var nodes = TwoNodes()
        let (tab, first) = nodes.a.connect()
        _ = nodes.a.run(.closed(tab, abnormal: false))
        // No notice has reached b yet: it reads the records before answering, and resumes.
        let reload = nodes.b.open()
        let reply = nodes.b.send(reload, "connect", Self.resume(first)).messages(to: reload).last { $0["type"] == "reply" }
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["created"] == false)
    }
}

@Suite struct ClusterExpiryTests {
    @Test func aNodeTheStoreNoLongerReportsGoneCountsAsAliveAgain() {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        _ = nodes.b.run(.notice(.nodesExpired([NodeID("a")])))
        // Each set is the store's whole answer: one that no longer names a (the store forgot
        // it, which it does only once no session names it) leaves a's claims standing.
        _ = nodes.b.run(.notice(.nodesExpired([])))
        let duplicate = nodes.b.open()
        let asked = nodes.b.send(duplicate, "connect", ClusterLeaseTests.resume(first))
        #expect(asked.messages(to: duplicate).isEmpty, "held: a holds the session, so b asks it")
        #expect(asked.contains { if case .signal(let s) = $0, case .probe = s.kind { true } else { false } })
    }
}

/// A connection told to close (here by a drain) while its `connect` waits stays closing when
/// the wait resolves: no scene is attached for it, no reply goes out after the close, requests
/// that still come on it are ignored, and the session is left free for the next window.
@Suite struct ClusterClosingConnectTests {
    /// A tab closed on a, its reload on a with its claim on the session in flight, and a drained.
    static func reloadClaimingWhenDrained() -> (nodes: TwoNodes, first: JSONValue, reload: ConnectionID) {
        var nodes = TwoNodes()
        let (tab, first) = nodes.a.connect()
        _ = nodes.a.run(.closed(tab, abnormal: false))
        nodes.a.completesCommits = false
        let reload = nodes.a.open()
        let waiting = nodes.a.send(reload, "connect", ClusterLeaseTests.resume(first))
        #expect(waiting.messages(to: reload).isEmpty, "held while its claim is in flight")
        // Answered as a `connect` sent then is, and closed.
        HubClosingConnectTests.expectDrained(nodes.a.run(.drain), reload)
        return (nodes, first, reload)
    }

    static func session(_ first: JSONValue) -> SessionID {
        SessionID(first["session"]?["persistentIdentifier"]?.stringValue ?? "")
    }

    /// After the wait resolved: the connection is still closing with no scene, and what comes
    /// on it (a request a scene would be answered, and a `connect`) gets nothing back.
    static func expectStaysClosing(_ nodes: inout TwoNodes, _ reload: ConnectionID, _ first: JSONValue,
                                   resolved: [Effect]) {
        nodes.a.completesCommits = true
        let later = nodes.a.send(reload, "listSessions") + nodes.a.send(reload, "connect", ClusterLeaseTests.resume(first))
        #expect((resolved + later).messages(to: reload).isEmpty, "nothing is sent after the close")
        guard case .closing(nil)? = nodes.a.hub.connections[reload]?.phase else {
            Issue.record("not closing: \(String(describing: nodes.a.hub.connections[reload]?.phase))")
            return
        }
        #expect(!nodes.a.hub.scenes.isLive(Self.session(first)))
    }

    /// The next window, through b once a's socket is gone, resumes the session itself: no
    /// lease or live scene was left behind on a.
    static func expectResumableElsewhere(_ nodes: inout TwoNodes, _ reload: ConnectionID, _ first: JSONValue) throws {
        _ = nodes.a.run(.closed(reload, abnormal: false))
        let id = Self.session(first)
        #expect(try nodes.a.store.loadState().claims[id]?.node == nil, "a let go of the session")
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let next = nodes.b.open()
        let reply = nodes.b.send(next, "connect", ClusterLeaseTests.resume(first)).messages(to: next).last {
            $0["type"] == "reply"
        }
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["created"] == false)
        #expect(reply?["result"]?["session"]?["persistentIdentifier"] == .string(id.rawValue))
    }

    @Test func aClaimWonAfterTheCloseAttachesNothingAndLetsTheSessionGo() throws {
        var (nodes, first, reload) = Self.reloadClaimingWhenDrained()
        let won = nodes.a.completeCommits()
        Self.expectStaysClosing(&nodes, reload, first, resolved: won)
        try Self.expectResumableElsewhere(&nodes, reload, first)
    }

    @Test func aClaimFailedAfterTheCloseIsNotAnsweredAndTheConnectionStaysClosing() throws {
        var (nodes, first, reload) = Self.reloadClaimingWhenDrained()
        let failed = nodes.a.completeCommits(.failed("the database went away"))
        Self.expectStaysClosing(&nodes, reload, first, resolved: failed)
        try Self.expectResumableElsewhere(&nodes, reload, first)
    }

    /// A connect on b for a session b has not read yet waits for the records; b drains meanwhile,
    /// answering it. The read ends after the close: done (the connect is not run again) or
    /// failed (it is not told `storage_failed`).
    @Test(arguments: [false, true])
    func aConnectWhoseRecordReadEndsAfterTheCloseIsNotRetriedOrAnswered(readFails: Bool) {
        var nodes = TwoNodes()
        let (tab, first) = nodes.a.connect()
        _ = nodes.a.run(.closed(tab, abnormal: false))
        nodes.b.completesLoads = false
        let reload = nodes.b.open()
        #expect(nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first)).messages(to: reload).isEmpty)
        HubClosingConnectTests.expectDrained(nodes.b.run(.drain), reload)
        let read = readFails ? nodes.b.failLoads("the database went away") : nodes.b.completeLoads()
        nodes.b.completesLoads = true
        let later = nodes.b.send(reload, "listSessions")
        #expect((read + later).messages(to: reload).isEmpty, "nothing is sent after the close")
        guard case .closing(nil)? = nodes.b.hub.connections[reload]?.phase else {
            Issue.record("not closing: \(String(describing: nodes.b.hub.connections[reload]?.phase))")
            return
        }
    }
}
