@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// What a cluster node keeps of who holds each session (`ClusterState.claims`) lasts as long as
/// the session: a session discarded here, for whatever reason, or read as deleted, leaves no
/// claim behind, so the map does not grow with every session made and destroyed over days;
/// and what a record load notes of this node's writes (`writtenDuringRecordLoad`) lasts one
/// load, failed or not.
@Suite struct ClusterClaimsTests {
    static func session(_ result: JSONValue) -> SessionID {
        SessionID(result["session"]?["persistentIdentifier"]?.stringValue ?? "")
    }

    /// Every claim this node keeps is of a session it still has.
    static func expectNoClaimOfAGoneSession(_ node: HubHarness, _ comment: Comment) {
        let gone = node.hub.cluster.claims.keys.filter { node.hub.sessions[$0] == nil }
        #expect(gone.isEmpty, "\(comment): claims of gone sessions \(gone.sorted())")
    }

    @Test func sessionsDestroyedOrDiscardedForIdlenessOnANodeLeaveNoClaimBehind() throws {
        var settings = Settings()
        settings.sessionMaxIdleMs = 3_600_000
        var nodes = TwoNodes(settings: settings)
        let (window, _) = nodes.a.connect()
        let baseline = nodes.a.hub.cluster.claims.count
        // Made and destroyed by request, the window closed first or still open.
        for round in 0..<6 {
            let (tab, made) = nodes.a.connect()
            if round.isMultiple(of: 2) { _ = nodes.a.run(.closed(tab, abnormal: false)) }
            let destroyed = nodes.a.request(window, "requestDestruction", ["session": .string(Self.session(made).rawValue)])
            #expect(destroyed["ok"] == true, "\(destroyed)")
        }
        // Made, closed, and discarded for idleness.
        var idle: [SessionID] = []
        for _ in 0..<4 {
            let (tab, made) = nodes.a.connect()
            _ = nodes.a.run(.closed(tab, abnormal: false))
            idle.append(Self.session(made))
        }
        nodes.a.clock.advance(Millis(settings.sessionMaxIdleMs) + 1)
        _ = nodes.a.run(.tick)
        #expect(idle.allSatisfy { nodes.a.hub.sessions[$0] == nil }, "the idle sessions were discarded")
        #expect(nodes.a.request(window, "listSessions")["result"]?["sessions"]?.arrayValue?.count == 1, "only the window's")
        Self.expectNoClaimOfAGoneSession(nodes.a, "a")
        #expect(nodes.a.hub.cluster.claims.count == baseline)
        // b read them made and deleted: it keeps no claim of them either.
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        Self.expectNoClaimOfAGoneSession(nodes.b, "b")
    }

    /// A window closes (its release goes to the store) and the session is destroyed before the
    /// release's outcome comes back: the outcome does not put the claim back.
    @Test func aReleaseAnsweredAfterTheSessionWasDestroyedLeavesNoClaim() throws {
        var nodes = TwoNodes()
        let (window, _) = nodes.a.connect()
        let (tab, made) = nodes.a.connect()
        nodes.a.completesCommits = false
        _ = nodes.a.run(.closed(tab, abnormal: false))
        #expect(!nodes.a.pendingCommits.isEmpty, "the release is in flight")
        // The store takes the release, then the deletion; a hears of the release after it
        // discarded the session.
        nodes.a.holdsPersists = true
        _ = nodes.a.send(window, "requestDestruction", ["session": .string(Self.session(made).rawValue)])
        #expect(nodes.a.hub.sessions[Self.session(made)] == nil)
        _ = nodes.a.completeCommits()
        nodes.a.completesCommits = true
        _ = nodes.a.releasePersists()
        #expect(try nodes.a.store.loadState().sessions.allSatisfy { $0.id != Self.session(made) }, "deleted")
        #expect(nodes.a.hub.cluster.claims[Self.session(made)] == nil, "the release put the claim back")
        Self.expectNoClaimOfAGoneSession(nodes.a, "a")
    }

    /// A record read made before this node destroyed a session, while another node held it,
    /// and answered after the deletion: the claim it read (naming the other node) is not taken
    /// for the gone session, and a connect naming the session is told it does not exist.
    @Test func aRecordReadMadeBeforeThisNodeDestroyedASessionHeldElsewhereLeavesNoClaim() throws {
        var nodes = TwoNodes()
        let (tab, first) = nodes.a.connect()
        let session = Self.session(first)
        _ = nodes.a.run(.closed(tab, abnormal: false))
        let (onA, _) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        // The window comes back through b, which claims the session.
        let reload = nodes.b.open()
        let resumed = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first))
        #expect(resumed.messages(to: reload).last { $0["type"] == "reply" }?["ok"] == true)
        // a hears of it and reads it; the read is made before a's window destroys the session…
        nodes.a.completesLoads = false
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        let load = try #require(nodes.a.pendingLoads.first)
        let stale = nodes.a.store.perform(load)
        guard case .recordChanges(let read?, _) = stale else {
            Issue.record("not a record read: \(stale)")
            return
        }
        #expect(read.claims[session]?.node == NodeID("b"), "the read has b's claim")
        #expect(nodes.a.request(onA, "requestDestruction", ["session": .string(session.rawValue)])["ok"] == true)
        // …and answered after it.
        _ = nodes.a.run(.loaded(stale))
        nodes.a.completesLoads = true
        _ = nodes.a.completeLoads()
        #expect(nodes.a.hub.sessions[session] == nil)
        #expect(nodes.a.hub.cluster.claims[session] == nil, "the gone session's claim was taken")
        Self.expectNoClaimOfAGoneSession(nodes.a, "a")
        // The destroyed session's id is not found, through a, not resumed or waited on.
        let again = nodes.a.open()
        let reply = nodes.a.send(again, "connect", ClusterLeaseTests.resume(first)).messages(to: again).last {
            $0["type"] == "reply"
        }
        #expect(reply?["ok"] == false)
        #expect(reply?["error"]?["code"] == "session_not_found", "\(String(describing: reply))")
    }

    /// A record load that fails forgets what this node wrote while it was in flight: the next
    /// load starts after those writes and reads them.
    @Test func aFailedRecordLoadForgetsTheWritesItNoted() throws {
        var nodes = TwoNodes()
        let (window, _) = nodes.a.connect()
        nodes.a.completesLoads = false
        let (onB, _) = nodes.b.connect()
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        #expect(!nodes.a.pendingLoads.isEmpty, "a record load is in flight")
        // a writes its window's session while the load is in flight…
        _ = nodes.a.request(window, "updateActivity", ["activity": ClusterSessionRevisionTests.budget])
        #expect(!nodes.a.hub.cluster.writtenDuringRecordLoad.isEmpty, "the write was noted")
        // …and the load fails.
        _ = nodes.a.failLoads("the database went away")
        #expect(nodes.a.hub.cluster.writtenDuringRecordLoad.isEmpty, "a failed load's notes carried over")
    }
}
