@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// Session records across nodes: the newest write wins everywhere, whichever node made it and
/// whatever copy another node still holds (`Hub+SessionRevisions.swift`).
@Suite struct ClusterSessionRevisionTests {
    static let budget: JSONValue = ["activityType": "panes.document", "title": "Budget", "targetContentIdentifier": "doc_budget"]

    @Test func aRefreshOfASessionLiveNowhereIsNotUndoneByTheOlderCopyOfTheNodeThatHeldItLast() throws {
        var nodes = TwoNodes()
        let (window, first) = nodes.a.connect()
        let session = try #require(first["session"]?["persistentIdentifier"]?.stringValue)
        nodes.a.run(.closed(window, abnormal: false))
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        // b refreshes the session, which is live nowhere; a has not read that write yet…
        let (onB, _) = nodes.b.connect()
        let refreshed = nodes.b.send(onB, "requestRefresh", ["session": .string(session), "title": "Budget",
                                                            "activity": Self.budget])
        #expect(refreshed.messages(to: onB).last { $0["type"] == "reply" }?["ok"] == true)
        // …when the window comes back there, from a's older copy.
        let reopened = nodes.a.open()
        let resumed = nodes.a.send(reopened, "connect", ClusterLeaseTests.resume(first))
        #expect(resumed.messages(to: reopened).last { $0["type"] == "reply" }?["ok"] == true)
        // a reads b's write: the refresh stays, in the store and on both nodes, and the window hears it.
        let caughtUp = TwoNodes.deliver(refreshed, to: &nodes.a)
        let told = caughtUp.events(to: reopened, named: "sessionRefreshed")
        #expect(told.first?["title"] == "Budget")
        #expect(told.first?["activity"]?["targetContentIdentifier"] == "doc_budget")
        #expect(told.first?["requestedBy"] == .null)
        TwoNodes.deliver(resumed + caughtUp, to: &nodes.b)
        let stored = try #require(try nodes.a.store.loadState().sessions.first { $0.id.rawValue == session })
        #expect(stored.title == "Budget", "the older copy undid the refresh")
        #expect(stored.restoration?.activity.targetContentIdentifier == "doc_budget")
        #expect(stored.liveSince != nil, "the live window's own fields are kept")
        #expect(nodes.a.hub.sessions[SessionID(session)]?.title == "Budget")
        #expect(nodes.b.hub.sessions[SessionID(session)]?.title == "Budget")
        #expect(nodes.b.hub.sessions[SessionID(session)] == stored)
        #expect(nodes.a.hub.sessions[SessionID(session)] == stored)
    }

    @Test func aRefreshMadeFromAnOlderCopyIsMadeAgainOnTheNewerOne() throws {
        var nodes = TwoNodes()
        let (window, first) = nodes.a.connect()
        let session = SessionID(try #require(first["session"]?["persistentIdentifier"]?.stringValue))
        nodes.a.run(.closed(window, abnormal: false))
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (onB, _) = nodes.b.connect()
        let refreshed = nodes.b.send(onB, "requestRefresh", ["session": .string(session.rawValue), "title": "Newer"])
        // a, not having read it, refreshes from its older copy: its write conflicts, a reads b's,
        // and makes its refresh again on top. Neither refresh is lost.
        let (onA, _) = nodes.a.connect()
        let again = nodes.a.send(onA, "requestRefresh", ["session": .string(session.rawValue), "subtitle": "older"])
        #expect(again.messages(to: onA).last { $0["type"] == "reply" }?["result"]?["session"]?["title"] == "Newer")
        let stored = try #require(try nodes.a.store.loadState().sessions.first { $0.id == session })
        #expect(stored.title == "Newer")
        #expect(stored.subtitle == "older")
        TwoNodes.deliver(refreshed, to: &nodes.a)
        TwoNodes.deliver(again, to: &nodes.b)
        #expect(nodes.a.hub.sessions[session] == stored)
        #expect(nodes.b.hub.sessions[session] == stored)
    }

    @Test func aRefreshSentToTheHolderAsItLetGoIsStillApplied() throws {
        var nodes = TwoNodes()
        let (window, first) = nodes.a.connect()
        let session = try #require(first["session"]?["persistentIdentifier"]?.stringValue)
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (onB, _) = nodes.b.connect()
        // b still sees a holding it, and sends the refresh there; the window closes meanwhile.
        let asked = nodes.b.send(onB, "requestRefresh", ["session": .string(session), "title": "Budget"])
        nodes.a.run(.closed(window, abnormal: false))
        TwoNodes.deliver(asked, to: &nodes.a)
        #expect(try nodes.a.store.loadState().sessions.first { $0.id.rawValue == session }?.title == "Budget")
    }

    /// A keyed refresh of a session live nowhere; the store takes it, then the session is
    /// deleted (by a window of this node, or on the other node and read here) before the
    /// commit's outcome comes back, and the requesting window stays or closes. The refresh is
    /// in the store: it is answered with its result, recorded under its key, and a retry (here
    /// or through the other node) gets that answer instead of waiting or `outcome_unknown`.
    /// The deletion, which came after the refresh, stays: in the store and on both nodes.
    @Test(arguments: [false, true], [false, true])
    func aCommittedRefreshWhoseSessionWasDeletedBeforeItsOutcomeIsAnsweredAndRecorded(deletedOnB: Bool,
                                                                                      requesterCloses: Bool) throws {
        var nodes = TwoNodes()
        let (session, onA, onB) = try nodes.closedSessionWithAWindowOnEachNode()
        let refresh: JSONObject = ["session": .string(session), "title": "Budget", "idempotencyKey": "refresh-1"]
        nodes.a.completesCommits = false
        let sent = nodes.a.send(onA, "requestRefresh", refresh)
        #expect(sent.messages(to: onA).isEmpty, "the refresh waits for its commit")
        let commit = try #require(nodes.a.pendingCommits.first)
        // The store takes the refresh; its outcome has not come back to a yet.
        #expect(try nodes.a.store.apply([.commit(commit)])[commit.id] == .committed)
        if deletedOnB {
            let destroyed = nodes.b.send(onB, "requestDestruction", ["session": .string(session)])
            #expect(destroyed.messages(to: onB).last { $0["type"] == "reply" }?["ok"] == true)
            TwoNodes.deliver(destroyed, to: &nodes.a)
        } else {
            let (destroyer, _) = nodes.a.connect()
            #expect(nodes.a.request(destroyer, "requestDestruction", ["session": .string(session)])["ok"] == true)
        }
        #expect(nodes.a.hub.sessions[SessionID(session)] == nil, "the session has left a")
        if requesterCloses { nodes.a.run(.closed(onA, abnormal: true)) }
        let committed = nodes.a.completeCommits(.committed)
        nodes.a.completesCommits = true
        #expect(committed.persisted.contains { if case .coordination(.recordKeyedRequest) = $0 { true } else { false } },
                "the refresh's outcome is recorded under its key")
        let (retrier, _) = nodes.a.connect()
        let retried = nodes.a.request(retrier, "requestRefresh", refresh)
        #expect(retried["ok"] == true, "\(retried)")
        #expect(retried["result"]?["session"]?["persistentIdentifier"] == .string(session))
        #expect(retried["result"]?["session"]?["title"] == "Budget")
        if !requesterCloses {
            let answered = committed.messages(to: onA).last { $0["type"] == "reply" }
            #expect(answered?["ok"] == true, "\(String(describing: answered))")
            #expect(answered?["result"] == retried["result"], "the retry gets the first answer")
        }
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        #expect(nodes.b.request(onB, "requestRefresh", refresh)["result"] == retried["result"], "through the other node")
        // Deleted after the refresh: it stays deleted.
        #expect(try nodes.a.store.loadState().sessions.contains { $0.id.rawValue == session } == false)
        #expect(nodes.a.hub.sessions[SessionID(session)] == nil)
        #expect(nodes.b.hub.sessions[SessionID(session)] == nil)
    }

    /// The same refresh answered `outcome_unknown` first (the store's connection dropped around
    /// the commit), its session deleted here, then the store finds it committed: the key
    /// records the refresh's result, and a retry gets it instead of waiting for ever.
    @Test func aRefreshAnsweredOutcomeUnknownWhoseSessionWasDeletedIsRecordedOnceItsCommitIsKnown() throws {
        var nodes = TwoNodes()
        let (window, first) = nodes.a.connect()
        let session = try #require(first["session"]?["persistentIdentifier"]?.stringValue)
        nodes.a.run(.closed(window, abnormal: false))
        let (onA, _) = nodes.a.connect()
        let refresh: JSONObject = ["session": .string(session), "title": "Budget", "idempotencyKey": "refresh-2"]
        nodes.a.completesCommits = false
        nodes.a.send(onA, "requestRefresh", refresh)
        let commit = try #require(nodes.a.pendingCommits.first)
        #expect(try nodes.a.store.apply([.commit(commit)])[commit.id] == .committed)
        let unknown = nodes.a.run(.committed(commit.id, .unknown("connection lost")))
        #expect(unknown.messages(to: onA).last { $0["type"] == "reply" }?["error"]?["code"] == "outcome_unknown")
        let (destroyer, _) = nodes.a.connect()
        #expect(nodes.a.request(destroyer, "requestDestruction", ["session": .string(session)])["ok"] == true)
        let known = nodes.a.run(.committed(commit.id, .committed))
        #expect(known.messages(to: onA).isEmpty, "answered once already")
        #expect(known.persisted.contains { if case .coordination(.recordKeyedRequest) = $0 { true } else { false } })
        let retried = nodes.a.request(destroyer, "requestRefresh", refresh)
        #expect(retried["ok"] == true, "\(retried)")
        #expect(retried["result"]?["session"]?["title"] == "Budget")
        #expect(nodes.a.hub.sessions[SessionID(session)] == nil)
    }

    /// A refresh whose commit reaches the store after the session was deleted through the
    /// other node: the deleted record has no revision to compare with, so the commit conflicts,
    /// the node reads the deletion and the refresh is answered `session_not_found`. Nothing
    /// brings the session back, in the store or on either node.
    @Test func aRefreshCommittedAfterItsSessionWasDeletedElsewhereDoesNotBringItBack() throws {
        var nodes = TwoNodes()
        let (session, onA, onB) = try nodes.closedSessionWithAWindowOnEachNode()
        let refresh: JSONObject = ["session": .string(session), "title": "Budget", "idempotencyKey": "refresh-3"]
        nodes.a.completesCommits = false
        nodes.a.send(onA, "requestRefresh", refresh)
        #expect(nodes.b.request(onB, "requestDestruction", ["session": .string(session)])["ok"] == true)
        let answered = nodes.a.completeCommits()
        nodes.a.completesCommits = true
        let reply = answered.messages(to: onA).last { $0["type"] == "reply" }
        #expect(reply?["ok"] == false, "\(String(describing: reply))")
        #expect(reply?["error"]?["code"] == "session_not_found")
        #expect(!nodes.a.committed.contains { $0.channel == .coordination(.sessionRecord(SessionID(session))) },
                "the store took no refresh")
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        #expect(try nodes.a.store.loadState().sessions.contains { $0.id.rawValue == session } == false)
        #expect(nodes.a.hub.sessions[SessionID(session)] == nil)
        #expect(nodes.b.hub.sessions[SessionID(session)] == nil)
    }

    /// A record read made before this node deleted the session (after another node refreshed
    /// it) and answered after the deletion does not bring the deleted session back here: the
    /// read is older than the deletion.
    @Test func aRecordReadMadeBeforeThisNodeDeletedASessionDoesNotBringItBack() throws {
        var nodes = TwoNodes()
        let (session, onA, onB) = try nodes.closedSessionWithAWindowOnEachNode()
        let refreshed = nodes.b.send(onB, "requestRefresh", ["session": .string(session), "title": "Budget"])
        #expect(refreshed.messages(to: onB).last { $0["type"] == "reply" }?["ok"] == true)
        // a hears of b's write and reads it; the read is made before a's window deletes the session…
        nodes.a.completesLoads = false
        TwoNodes.deliver(refreshed, to: &nodes.a)
        let load = try #require(nodes.a.pendingLoads.first)
        let stale = nodes.a.store.perform(load)
        #expect(nodes.a.request(onA, "requestDestruction", ["session": .string(session)])["ok"] == true)
        // …and answered after it.
        let (watcher, _) = nodes.a.connect()
        _ = nodes.a.request(watcher, "listSessions", ["watch": true])
        let loaded = nodes.a.run(.loaded(stale))
        #expect(nodes.a.hub.sessions[SessionID(session)] == nil, "the deleted session came back on a")
        let listed = loaded.events(to: watcher, named: "sessionsChanged").last?["sessions"]?.arrayValue ?? []
        #expect(!listed.contains { $0["persistentIdentifier"] == .string(session) }, "a switcher shows it again")
    }
}

extension TwoNodes {
    /// A session whose window on a closed (live nowhere), then a window on each node, and b
    /// told what a did.
    fileprivate mutating func closedSessionWithAWindowOnEachNode() throws -> (String, ConnectionID, ConnectionID) {
        let (window, first) = a.connect()
        let session = try #require(first["session"]?["persistentIdentifier"]?.stringValue)
        a.run(.closed(window, abnormal: false))
        let (onA, _) = a.connect()
        let (onB, _) = b.connect()
        TwoNodes.deliver(a.effects, to: &b)
        return (session, onA, onB)
    }
}
