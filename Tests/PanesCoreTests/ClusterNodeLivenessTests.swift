@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A window whose scene ended resumes, never forks, when no other window lives: a release the
/// store refused is written again, a holder with no scene says so, and a connect waiting for
/// a node that died is let through as soon as the store shows it gone, not at its lease's end.
@Suite struct ClusterNodeLivenessTests {
    static let a = NodeID("a")
    static let b = NodeID("b")

    static func reply(_ effects: [Effect], to connection: ConnectionID) -> JSONValue? {
        effects.messages(to: connection).last { $0["type"] == "reply" }
    }

    static func sessionID(_ result: JSONValue) -> SessionID {
        SessionID(result["session"]?["persistentIdentifier"]?.stringValue ?? "")
    }

    /// Two nodes with leases in the store, on b's clock, and a window live on a.
    static func windowOnA() throws -> (nodes: TwoNodes, tab: ConnectionID, first: JSONValue) {
        var nodes = TwoNodes()
        let clock = nodes.b.clock
        nodes.a.store.now = { clock.now }
        _ = try nodes.a.store.register(node: a, leaseMs: nodes.a.hub.settings.nodeLeaseMs)
        _ = try nodes.a.store.register(node: b, leaseMs: nodes.a.hub.settings.nodeLeaseMs)
        let (tab, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        return (nodes, tab, first)
    }

    /// The scene ends on a while the store is away: its release fails.
    static func sceneEndedInAnOutage(_ nodes: inout TwoNodes, _ tab: ConnectionID) {
        nodes.a.completesCommits = false
        _ = nodes.a.run(.closed(tab, abnormal: false))
        nodes.a.completeCommits(.failed("the store is unavailable"))
        nodes.a.completesCommits = true
    }

    @Test func aReleaseLostInAnOutageIsWrittenAgainAndTheReloadResumes() throws {
        var (nodes, tab, first) = try Self.windowOnA()
        Self.sceneEndedInAnOutage(&nodes, tab)
        // The store is back; the reload reaches b, which finds the session still claimed by a.
        let reload = nodes.b.open()
        #expect(nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first)).messages(to: reload).isEmpty)
        // a writes the release again once its backoff is over; b resumes the session.
        nodes.a.clock.advance(Backoff.sharedStore.minMs)
        let released = nodes.a.run(.tick)
        let reply = Self.reply(TwoNodes.deliver(released, to: &nodes.b), to: reload)
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["created"] == false)
        #expect((reply?["result"]?["forkedFrom"] ?? .null) == .null)
        #expect(Self.sessionID(reply?["result"] ?? .null) == Self.sessionID(first))
    }

    @Test func aHolderWithNoSceneAnswersNotLiveAndTheAskerResumesAtOnce() throws {
        var (nodes, tab, first) = try Self.windowOnA()
        Self.sceneEndedInAnOutage(&nodes, tab)
        let reload = nodes.b.open()
        let asked = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first))
        // a's store is still catching up: its release is not through, but its answer is.
        nodes.a.completesCommits = false
        let answered = TwoNodes.deliver(asked, to: &nodes.a)
        #expect(answered.contains { if case .signal(let s) = $0, case .notLive = s.kind { s.to == Self.b } else { false } })
        let reply = Self.reply(TwoNodes.deliver(answered, to: &nodes.b), to: reload)
        #expect(reply?["result"]?["created"] == false, "\(String(describing: reply))")
        #expect(Self.sessionID(reply?["result"] ?? .null) == Self.sessionID(first))
        // a's late release conflicts with b's claim and changes nothing.
        nodes.a.completeCommits()
        #expect(try nodes.a.store.loadState().claims[Self.sessionID(first)] == SessionClaim(node: Self.b, epoch: 2))
    }

    @Test func aConnectWaitingOnAHolderKilledAMomentAgoResumesLongBeforeItsLease() throws {
        var (nodes, _, first) = try Self.windowOnA()
        let started = nodes.b.clock.now
        let reload = nodes.b.open()
        // a is alive when the connect comes: it waits (and b asks a, which never answers).
        let asked = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first))
        #expect(asked.messages(to: reload).isEmpty)
        #expect(asked.contains(.checkNodes), "the store is asked at once whether a is there")
        // a is killed: its connection drops, and its lock with it. The next check finds it.
        nodes.a.store.dropConnection(of: Self.a)
        nodes.b.clock.advance(Millis(nodes.b.hub.settings.nodeCheckIntervalMs))
        let reply = Self.reply(nodes.b.run(.tick), to: reload)
        #expect(reply?["result"]?["created"] == false, "\(String(describing: reply))")
        #expect(Self.sessionID(reply?["result"] ?? .null) == Self.sessionID(first))
        #expect(nodes.b.clock.now - started < Millis(nodes.b.hub.settings.nodeLeaseMs))
        #expect(try nodes.b.store.loadState().claims[Self.sessionID(first)] == SessionClaim(node: Self.b, epoch: 2))
    }

    /// A reload on b of a's window, at its deadline, b's checks slow to come back (a busy
    /// heartbeat thread): what b did at the deadline, before any check answered.
    static func reloadAtItsDeadline() throws -> (nodes: TwoNodes, reload: ConnectionID, atDeadline: [Effect]) {
        var (nodes, _, first) = try windowOnA()
        nodes.b.completesChecks = false
        let reload = nodes.b.open()
        _ = nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first))
        nodes.b.clock.advance(ClusterLeaseTests.leaseWait(nodes.b))
        let atDeadline = nodes.b.run(.tick)
        return (nodes, reload, atDeadline)
    }

    @Test func aConnectAtItsDeadlineResumesWhenTheHoldersLeaseEndedUnheard() throws {
        // b has not heard that a, killed as the connect came, lost its lease (its connection
        // lingering, its lock held).
        var (nodes, reload, atDeadline) = try Self.reloadAtItsDeadline()
        #expect(Self.reply(atDeadline, to: reload) == nil, "no fork before a check made now decides")
        let reply = Self.reply(nodes.b.completeChecks(), to: reload)
        #expect(reply?["result"]?["created"] == false, "\(String(describing: reply))")
        #expect((reply?["result"]?["forkedFrom"] ?? .null) == .null)
    }

    @Test func aConnectAtItsDeadlineStillForksWhenACheckFindsTheHolderAlive() throws {
        var (nodes, _, first) = try Self.windowOnA()
        let duplicate = nodes.b.open()
        _ = nodes.b.send(duplicate, "connect", ClusterLeaseTests.resume(first))
        // a lives on (it renews every beat), and its window never answered b's probe in time.
        let beat = Millis(nodes.a.hub.settings.nodeHeartbeatMs)
        for _ in 0..<(ClusterLeaseTests.leaseWait(nodes.b) / beat) {
            nodes.b.clock.advance(beat)
            _ = try nodes.a.store.heartbeat(node: Self.a, leaseMs: nodes.a.hub.settings.nodeLeaseMs)
        }
        nodes.b.clock.advance(ClusterLeaseTests.leaseWait(nodes.b) % beat)
        let reply = Self.reply(nodes.b.run(.tick), to: duplicate)
        #expect(reply?["result"]?["forkedFrom"] == first["session"]?["persistentIdentifier"])
    }

    @Test func aDeadlineCheckThatCannotReachTheStoreAnswersRetryNotAFork() throws {
        var (nodes, reload, _) = try Self.reloadAtItsDeadline()
        let reply = Self.reply(nodes.b.completeChecks(failing: true), to: reload)
        #expect(reply?["ok"] == false)
        #expect(reply?["error"]?["code"] == "storage_failed")
        #expect(reply?["error"]?["retryAfterMs"] != nil)
    }

    /// A connect whose deciding check could not reach the store, after another connect for the
    /// session had asked the holder again and gone: the session stayed in `probesSent` for
    /// good, and no later connect for it asked its holder (each waited out its whole deadline
    /// instead of forking at the holder's answer).
    @Test func aConnectWhoseDecidingCheckFailedLetsItsRetryAskTheHolderAgain() throws {
        var (nodes, _, first) = try Self.windowOnA()
        let session = Self.sessionID(first)
        func asksA(_ effects: [Effect]) -> Bool {
            effects.contains { effect in
                guard case .signal(let signal) = effect, case .probe(session) = signal.kind else { return false }
                return signal.to == Self.a
            }
        }
        nodes.b.completesChecks = false
        let reload = nodes.b.open()
        #expect(asksA(nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first))))
        nodes.b.clock.advance(ClusterLeaseTests.leaseWait(nodes.b))
        _ = nodes.b.run(.tick)
        #expect(nodes.b.hub.cluster.probesSent.isEmpty, "past its deadline, the reload waits for a check to decide")
        // Another tab asks a again meanwhile, and goes.
        let other = nodes.b.open()
        #expect(asksA(nodes.b.send(other, "connect", ClusterLeaseTests.resume(first))))
        _ = nodes.b.run(.closed(other, abnormal: true))
        let failed = Self.reply(nodes.b.completeChecks(failing: true), to: reload)
        #expect(failed?["error"]?["code"] == "storage_failed", "\(String(describing: failed))")
        #expect(nodes.b.hub.pendingConnects.isEmpty)
        #expect(nodes.b.hub.cluster.probesSent.isEmpty, "nobody waits for a's answer")
        nodes.b.completesChecks = true
        #expect(asksA(nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first))), "the retry asks a again")
    }

    // MARK: A holder whose lease ran out (issue 27 §3, the partition test's fork)

    /// a is cut off from the store: its lease watch closes its window (4011) and the release
    /// cannot be written, and a renewal of a's cut off between its round trips still holds a's
    /// row in the store (`holdRow`), so no check can end a's lease. The window's reload
    /// reaches b, which waits for a and asks it (a never hears).
    static func reloadOfACutOffWindow() throws -> (nodes: TwoNodes, reload: ConnectionID, first: JSONValue) {
        var (nodes, tab, first) = try windowOnA()
        nodes.a.completesCommits = false
        _ = nodes.a.run(.notice(.leaseLost))
        #expect(!nodes.a.hub.scenes.isLive(sessionID(first)))
        nodes.a.completeCommits(.failed("the store is out of reach"))
        _ = nodes.a.run(.closed(tab, abnormal: false))
        nodes.a.store.holdRow(of: a)
        let reload = nodes.b.open()
        #expect(nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first)).messages(to: reload).isEmpty)
        return (nodes, reload, first)
    }

    /// `ms` of b's life, beat by beat: b renews its lease (a, cut off, does not) and is told
    /// what its heartbeat reads, the nodes alive and the nodes gone, as `ClusterNode` tells
    /// it, then ticks. Returns everything b did.
    static func beats(_ nodes: inout TwoNodes, for ms: Millis) throws -> [Effect] {
        let beat = Millis(nodes.b.hub.settings.nodeHeartbeatMs)
        var effects: [Effect] = []
        var left = ms
        while left > 0 {
            let step = min(beat, left)
            nodes.b.clock.advance(step)
            left -= step
            let gone = try nodes.b.store.heartbeat(node: b, leaseMs: nodes.b.hub.settings.nodeLeaseMs)
            effects += nodes.b.run(.notice(.nodesAlive(try nodes.b.store.liveNodes(), readBegan: 0)))
            if !gone.isEmpty { effects += nodes.b.run(.notice(.nodesExpired(gone))) }
            effects += nodes.b.run(.tick)
        }
        return effects
    }

    /// Before, b's deciding check at the reload's deadline did not find a gone (its lease had
    /// run out, but ending it waited for a's row) and b forked: a new session for the window,
    /// although no other window lived. a's lease has run out as the database counts it: a
    /// serves nothing, so b waits for the end (and a stale "live" from a changes nothing), then
    /// resumes. While a's lease ran, b waited it out.
    @Test func aReloadWaitingOnAHolderWhoseLeaseRanOutResumesWhenTheLeaseEndsNeverForks() throws {
        var (nodes, reload, first) = try Self.reloadOfACutOffWindow()
        let lease = Millis(nodes.b.hub.settings.nodeLeaseMs)
        // The partition waits the lease: nothing is decided while a's lease runs.
        #expect(try Self.beats(&nodes, for: lease - 1).messages(to: reload).isEmpty)
        #expect(nodes.b.hub.leaseState(of: Self.a) == .running)
        // a's lease runs out in the store; its end waits for a's row.
        var waited = try Self.beats(&nodes, for: ClusterLeaseTests.leaseWait(nodes.b) - lease + 1)
        #expect(nodes.b.hub.leaseState(of: Self.a) == .lapsed)
        // An answer a sent before it was cut off, to a probe of an earlier connect, comes late.
        waited += nodes.b.run(.notice(.signal(NodeSignal(from: Self.a, to: Self.b, kind: .live(Self.sessionID(first))))))
        waited += try Self.beats(&nodes, for: Millis(nodes.b.hub.settings.nodeHeartbeatMs))
        #expect(Self.reply(waited, to: reload) == nil, "past its deadline, not forked: \(String(describing: Self.reply(waited, to: reload)))")
        // The database ends a's transaction: the next check ends a's lease, and b resumes.
        nodes.a.store.releaseRow(of: Self.a)
        let reply = Self.reply(try Self.beats(&nodes, for: Millis(nodes.b.hub.settings.nodeHeartbeatMs)), to: reload)
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["created"] == false)
        #expect((reply?["result"]?["forkedFrom"] ?? .null) == .null)
        #expect(Self.sessionID(reply?["result"] ?? .null) == Self.sessionID(first))
        #expect(try nodes.b.store.loadState().claims[Self.sessionID(first)]?.node == Self.b)
    }

    /// A lease that runs out and is never ended (the store never lets go of the holder's row):
    /// the reload is told to retry once it has waited a lease more, not forked.
    @Test func aReloadWaitingOnALapsedHolderWhoseEndNeverComesIsToldToRetry() throws {
        var (nodes, reload, _) = try Self.reloadOfACutOffWindow()
        let waited = try Self.beats(&nodes, for: 2 * ClusterLeaseTests.leaseWait(nodes.b) + 1)
        let reply = Self.reply(waited, to: reload)
        #expect(reply?["ok"] == false, "\(String(describing: reply))")
        #expect(reply?["error"]?["code"] == "storage_failed")
        #expect(reply?["error"]?["retryAfterMs"] != nil)
        #expect(nodes.b.hub.pendingConnects.isEmpty)
    }

    /// The listener's read of the nodes alive, begun before a's registration showed, reaches b
    /// after the heartbeat's newer read (which is told only when it changes): b kept the older
    /// read, took a for lapsed until membership next changed, and dropped a's "live", so a
    /// duplicated tab of a's window was told to retry for ever instead of forking.
    @Test func aStaleReadOfTheNodesAliveIsNotTakenOverANewerOne() throws {
        var (nodes, tab, first) = try Self.windowOnA()
        _ = nodes.b.run(.notice(.nodesAlive([Self.a, Self.b], readBegan: 20)))
        _ = nodes.b.run(.notice(.nodesAlive([Self.b], readBegan: 10)))
        #expect(nodes.b.hub.leaseState(of: Self.a) == .running)
        let duplicate = nodes.b.open()
        let asked = nodes.b.send(duplicate, "connect", ClusterLeaseTests.resume(first))
        #expect(asked.messages(to: duplicate).isEmpty)
        // b asks a, which pings its window; the window answers, and a tells b it is live.
        #expect(TwoNodes.deliver(asked, to: &nodes.a).probes == [tab])
        let reply = Self.reply(TwoNodes.deliver(nodes.a.run(.pong(tab)), to: &nodes.b), to: duplicate)
        #expect(reply?["result"]?["forkedFrom"] == first["session"]?["persistentIdentifier"], "\(String(describing: reply))")
        // A read begun later is taken: a missing from it has let its lease run out.
        _ = nodes.b.run(.notice(.nodesAlive([Self.b], readBegan: 30)))
        #expect(nodes.b.hub.leaseState(of: Self.a) == .lapsed)
    }

    /// a's "live", sent before its lease ended, reaches b after b found that lease ended and
    /// while the takeover waits for the read of what a last wrote: a serves nothing any more,
    /// so the waiting reload resumes once the read is through, never forks.
    @Test func aLateLiveFromAHolderWhoseLeaseEndedDoesNotForkTheTakeover() throws {
        var (nodes, _, first) = try Self.windowOnA()
        let reload = nodes.b.open()
        #expect(nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first)).messages(to: reload).isEmpty)
        // a is killed; b's next check finds its lease ended, and the takeover waits for the read.
        nodes.b.completesLoads = false
        nodes.a.store.dropConnection(of: Self.a)
        nodes.b.clock.advance(Millis(nodes.b.hub.settings.nodeCheckIntervalMs))
        var waited = nodes.b.run(.tick)
        #expect(nodes.b.hub.leaseState(of: Self.a) == .ended)
        waited += nodes.b.run(.notice(.signal(NodeSignal(from: Self.a, to: Self.b, kind: .live(Self.sessionID(first))))))
        #expect(Self.reply(waited, to: reload) == nil, "forked for an ended holder: \(String(describing: Self.reply(waited, to: reload)))")
        nodes.b.completesLoads = true
        let read = nodes.b.completeLoads()
        let reply = Self.reply(read + nodes.b.completeCommits(), to: reload)
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["created"] == false)
        #expect((reply?["result"]?["forkedFrom"] ?? .null) == .null)
        #expect(Self.sessionID(reply?["result"] ?? .null) == Self.sessionID(first))
    }

    @Test func aRecordReadThatFailsIsTriedAgainAfterABackoffNotAtOnce() {
        var nodes = TwoNodes()
        nodes.b.completesLoads = false
        _ = nodes.b.run(.notice(.records(cursor: .max)))
        #expect(nodes.b.pendingLoads.count == 1)
        nodes.b.failLoads("the store is unavailable")
        #expect(nodes.b.pendingLoads.isEmpty, "not read again at once")
        // 50 ms, then 100 ms, then 200 ms…
        for pause in [Millis(50), 100, 200] {
            nodes.b.clock.advance(pause - 1)
            _ = nodes.b.run(.tick)
            #expect(nodes.b.pendingLoads.isEmpty)
            nodes.b.clock.advance(1)
            _ = nodes.b.run(.tick)
            #expect(nodes.b.pendingLoads.count == 1, "read again after \(pause) ms")
            nodes.b.failLoads("the store is unavailable")
        }
        // The listener is back: the store answers, and the read goes at once.
        _ = nodes.b.run(.notice(.resubscribed))
        #expect(nodes.b.pendingLoads.contains { if case .recordChanges = $0 { true } else { false } })
    }
}
