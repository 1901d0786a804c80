@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// A `connect` that waits when its connection is told to close by a drain, and the wait that
/// resolves after the close. Wherever it waits, the drain answers it as it answers a `connect`
/// sent then (`server_draining` with `retryAfterMs`) before the close; each place a wait
/// resolves checks `Connections.isOpen`. Each wait has a test that drains while it is pending
/// (the answer before the close, nothing after: `expectDrained`), then resolves it, and finds no
/// scene attached, nothing sent after the close effect, what the connect held (a claim, a key's
/// reservation) let go once, and a retry through another node answered. The waits, where each
/// resolves, and its test:
///
/// - probe of the live scene: `pongReceived`, `resolvePendingConnects` (probe deadline, the
///   original's socket gone): `aProbeThatEndsAfterTheDrainForksNothing`;
/// - holder on another node: `received(.live)`, node checks (`failUndecided`, `nodesChecked`),
///   the holder found gone: `aHolderThatAnswersAfterTheDrainForksNothing`;
/// - takeover from a gone node: `resumeTakeovers` (read failed, read done):
///   `aTakeoverWhoseReadEndsAfterTheDrainClaimsNothing`;
/// - claim: won and failed (`claimCommitted`) in ClusterClosingConnectTests (ClusterLeaseTests.swift);
///   lost (`claimCommitted` `.conflict`): `aKeyedConnectClosedWhileItsClaimIsInFlight…`; outcome
///   unknown (`commitOutcomeUnknown`): `aClaimWhoseOutcomeIsUnknownAfterTheDrain…`;
/// - ticket: `received(.ticket)` and `expireTicketWaits` (`retryConnect`):
///   `aTicketThatArrivesAfterTheDrainIsLeftForTheRetry`;
/// - record read: `recordLoadFinished` (`retryConnect`, read done or failed) in
///   ClusterClosingConnectTests;
/// - request key look-up: `answerWaiter` (failed), `handleRedispatched` (reserved):
///   `aKeyLookUpThatEndsAfterTheDrainLeavesTheKeyFree`;
/// - request key's first attempt in flight (a retry waiting on it):
///   `aRetryWaitingOnItsFirstAttemptIsAnsweredByTheDrainAsItIs`.
///
/// The waits in `pendingConnects` (probe, holder, takeover, deciding check) are also let go by
/// `Hub.close` (`dropPendingConnect`): their `isOpen` guard is a second line, and their tests
/// fail only when every line is gone.
@Suite struct HubClosingConnectTests {
    static let hello: JSONObject = ["protocol": 1, "auth": ["name": "alice"]]

    static func session(_ first: JSONValue) -> SessionID {
        SessionID(first["session"]?["persistentIdentifier"]?.stringValue ?? "")
    }

    /// A resume of `first`'s session with a request key.
    static func keyedResume(_ first: JSONValue, key: String) -> JSONObject {
        var fields = ClusterLeaseTests.resume(first)
        fields["idempotencyKey"] = .string(key)
        return fields
    }

    /// Messages sent to `connection` after its (first) close effect.
    static func sentAfterClose(_ effects: [Effect], to connection: ConnectionID) -> [JSONValue] {
        let closed = effects.firstIndex { effect in
            if case .close(let target, _, _) = effect { target == connection } else { false }
        }
        guard let closed else { return [] }
        return Array(effects[(closed + 1)...]).messages(to: connection)
    }

    /// Request keys given up in the shared store (`releaseRequestKey`).
    static func keyReleases(_ effects: [Effect]) -> Int {
        effects.persisted.count { if case .coordination(.releaseRequestKey) = $0 { true } else { false } }
    }

    /// Claims of `session` for a node (not releases) in commits.
    static func claims(of session: SessionID, in effects: [Effect]) -> Int {
        effects.persisted.count { command in
            guard case .coordination(.claimSession(let id, let claim)) = command else { return false }
            return id == session && claim.node != nil
        }
    }

    static func probesAsked(_ effects: [Effect]) -> Int {
        effects.count { effect in
            if case .signal(let signal) = effect, case .probe = signal.kind { true } else { false }
        }
    }

    /// The drain answered the `connect` waiting on `connection` as it answers one sent then
    /// (`server_draining`, `retryAfterMs` of `drainReconnectAfterMs`), once, closed it with
    /// `goingAway`, and sent it nothing after the close.
    static func expectDrained(_ drained: [Effect], _ connection: ConnectionID, settings: Settings = Settings(),
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(drained.closes(connection) == [.goingAway], sourceLocation: sourceLocation)
        #expect(sentAfterClose(drained, to: connection).isEmpty, sourceLocation: sourceLocation)
        let answers = drained.messages(to: connection)
        #expect(answers.map(\.errorCode) == ["server_draining"], "answered before the close: \(answers)",
                sourceLocation: sourceLocation)
        #expect(answers.first?["request"] == "connect", sourceLocation: sourceLocation)
        #expect(answers.first?["error"]?["retryAfterMs"] == .int(Int64(settings.drainReconnectAfterMs)),
                sourceLocation: sourceLocation)
    }

    /// Still closing, with no scene, and nothing waits for it.
    static func expectClosingWithoutScene(_ hub: Hub, _ connection: ConnectionID,
                                          sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .closing(nil)? = hub.connections[connection]?.phase else {
            Issue.record("not closing without a scene: \(String(describing: hub.connections[connection]?.phase))",
                         sourceLocation: sourceLocation)
            return
        }
        #expect(hub.pendingConnects.isEmpty, sourceLocation: sourceLocation)
    }

    // MARK: Probe of the live scene

    enum ProbeEnd: CaseIterable, Sendable { case pong, deadline, originalGone }

    /// A duplicate tab waits on a probe of the original; the drain answers it and closes both.
    /// However the probe ends, the duplicate gets nothing more and no fork is made.
    @Test(arguments: ProbeEnd.allCases)
    func aProbeThatEndsAfterTheDrainForksNothing(_ end: ProbeEnd) throws {
        var harness = HubHarness()
        let (original, first) = harness.connect()
        let duplicate = harness.open()
        let asked = harness.send(duplicate, "connect", ClusterLeaseTests.resume(first))
        #expect(asked.probes == [original] && asked.messages(to: duplicate).isEmpty)
        let drained = harness.run(.drain)
        Self.expectDrained(drained, duplicate)
        let ended: [Effect]
        switch end {
        case .pong: ended = harness.run(.pong(original))
        case .deadline:
            harness.clock.advance(Millis(harness.hub.settings.livenessProbeTimeoutMs) + 1)
            ended = harness.run(.tick)
        case .originalGone: ended = harness.run(.closed(original, abnormal: true))
        }
        #expect(ended.messages(to: duplicate).isEmpty, "nothing after the close")
        Self.expectClosingWithoutScene(harness.hub, duplicate)
        #expect(harness.hub.sessions.count == 1, "no fork")
        #expect(try harness.store.loadState().sessions.count == 1)
    }

    // MARK: Holder on another node

    enum HolderEnd: CaseIterable, Sendable { case holderAnswers, checkAnswers, checkFails, holderGone }

    /// A duplicate on b of a window live on a waits for a's answer (and, past its deadline, for
    /// a node check); b drains. However the wait ends, the duplicate gets nothing more, and
    /// nothing is forked or claimed.
    @Test(arguments: HolderEnd.allCases)
    func aHolderThatAnswersAfterTheDrainForksNothing(_ end: HolderEnd) throws {
        var nodes = TwoNodes()
        let (onA, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let duplicate = nodes.b.open()
        let asked = nodes.b.send(duplicate, "connect", ClusterLeaseTests.resume(first))
        #expect(Self.probesAsked(asked) == 1 && asked.messages(to: duplicate).isEmpty)
        if end == .checkAnswers || end == .checkFails {
            // Past its deadline the connect waits for a node check to decide.
            nodes.b.completesChecks = false
            nodes.b.clock.advance(ClusterLeaseTests.leaseWait(nodes.b))
            #expect(nodes.b.run(.tick).messages(to: duplicate).isEmpty)
            #expect(nodes.b.pendingChecks > 0)
        }
        let drained = nodes.b.run(.drain)
        Self.expectDrained(drained, duplicate)
        #expect(nodes.b.hub.cluster.probesSent.isEmpty, "nobody waits for a's answer (the drain kept the session there)")
        var ended: [Effect] = []
        switch end {
        case .holderAnswers:
            #expect(TwoNodes.deliver(asked, to: &nodes.a).probes == [onA])
            ended = TwoNodes.deliver(nodes.a.run(.pong(onA)), to: &nodes.b)
        case .checkAnswers: ended = nodes.b.completeChecks()
        case .checkFails: ended = nodes.b.completeChecks(failing: true)
        case .holderGone: ended = nodes.b.run(.notice(.nodesExpired([NodeID("a")])))
        }
        #expect(ended.messages(to: duplicate).isEmpty, "nothing after the close")
        Self.expectClosingWithoutScene(nodes.b.hub, duplicate)
        #expect(Self.claims(of: Self.session(first), in: ended) == 0)
        #expect(try nodes.b.store.loadState().sessions.count == 1, "no fork")
    }

    // MARK: Takeover from a gone node

    /// A reload on b of a window whose node, a, was found gone waits for the read of a's last
    /// writes before it takes the session over; b drains. When the read ends (done or failed),
    /// nothing is claimed or sent, and a's claim stands.
    @Test(arguments: [false, true])
    func aTakeoverWhoseReadEndsAfterTheDrainClaimsNothing(readFails: Bool) throws {
        var nodes = TwoNodes()
        let (_, first) = nodes.a.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let id = Self.session(first)
        nodes.b.completesLoads = false
        _ = nodes.b.run(.notice(.nodesExpired([NodeID("a")])))
        let reload = nodes.b.open()
        #expect(nodes.b.send(reload, "connect", ClusterLeaseTests.resume(first)).messages(to: reload).isEmpty)
        #expect(nodes.b.hub.cluster.takeoversWaiting.contains(id), "waits for the read of a's last writes")
        Self.expectDrained(nodes.b.run(.drain), reload)
        let read = readFails ? nodes.b.failLoads("the database went away") : nodes.b.completeLoads()
        #expect(read.messages(to: reload).isEmpty, "nothing after the close")
        #expect(Self.claims(of: id, in: read) == 0, "not taken over")
        Self.expectClosingWithoutScene(nodes.b.hub, reload)
        #expect(try nodes.b.store.loadState().claims[id]?.node == NodeID("a"))
    }

    // MARK: Claims

    /// Review R1 (d0b8d0d): a keyed reload on a whose claim is in flight when a drains gives its
    /// key's reservation up with the drain's answer, not when the socket goes: its retry through b is
    /// answered at once, with the same session. a's claim then comes back lost (b's won): a
    /// does not wait for the session or ask b about it, and the key was given up once.
    @Test func aKeyedConnectClosedWhileItsClaimIsInFlightLetsItsRetryElsewhereGoOnAtOnce() throws {
        var nodes = TwoNodes()
        _ = try nodes.a.store.register(node: NodeID("a"), leaseMs: 60_000)
        let (tab, first) = nodes.a.connect()
        _ = nodes.a.run(.closed(tab, abnormal: false))
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let id = Self.session(first)
        let hello = Self.keyedResume(first, key: "reload-1")
        nodes.a.completesCommits = false
        let reload = nodes.a.open()
        #expect(nodes.a.send(reload, "connect", hello).messages(to: reload).isEmpty, "its claim is in flight")
        #expect(nodes.a.pendingCommits.count == 1)
        let drained = nodes.a.run(.drain)
        Self.expectDrained(drained, reload)
        #expect(Self.keyReleases(drained) == 1, "the key is given up with the drain's answer")

        let retry = nodes.b.open()
        let reply = nodes.b.request(retry, "connect", hello)
        #expect(reply["ok"] == true, "answered at once, not outcome_unknown: \(reply)")
        #expect(reply["result"]?["session"]?["persistentIdentifier"] == .string(id.rawValue))
        #expect(reply["result"]?["created"] == false)
        #expect(try nodes.b.store.loadState().sessions.count == 1, "no second session")

        nodes.a.completesCommits = true
        let lost = nodes.a.completeCommits()
        #expect(lost.messages(to: reload).isEmpty, "nothing after the close")
        #expect(Self.probesAsked(lost) == 0, "a does not ask b about a window nobody waits for")
        Self.expectClosingWithoutScene(nodes.a.hub, reload)
        _ = nodes.a.run(.closed(reload, abnormal: false))
        #expect(Self.keyReleases(nodes.a.effects) == 1, "given up once")
        #expect(try nodes.a.store.loadState().claims[id] == SessionClaim(node: NodeID("b"), epoch: 2))
    }

    /// A reload on a whose claim is in flight when a drains; the store cannot tell in time
    /// whether the claim committed. The connect, answered by the drain, is not answered
    /// `outcome_unknown` too; when the store finds out it committed, a lets the session go (no
    /// scene holds it), and the key was given up once, with the drain's answer.
    @Test func aClaimWhoseOutcomeIsUnknownAfterTheDrainAnswersNothingAndIsLetGo() throws {
        var nodes = TwoNodes()
        let (tab, first) = nodes.a.connect()
        _ = nodes.a.run(.closed(tab, abnormal: false))
        let id = Self.session(first)
        nodes.a.completesCommits = false
        let reload = nodes.a.open()
        #expect(nodes.a.send(reload, "connect", Self.keyedResume(first, key: "reload-2")).messages(to: reload).isEmpty)
        let commit = try #require(nodes.a.pendingCommits.first)
        Self.expectDrained(nodes.a.run(.drain), reload)
        let unknown = nodes.a.run(.committed(commit.id, .unknown("connection lost around COMMIT")))
        #expect(unknown.messages(to: reload).isEmpty, "not answered after the close")
        let known = nodes.a.completeCommits()
        #expect(known.messages(to: reload).isEmpty)
        Self.expectClosingWithoutScene(nodes.a.hub, reload)
        #expect(try nodes.a.store.loadState().claims[id]?.node == nil, "the claim that committed is let go")
        _ = nodes.a.run(.closed(reload, abnormal: false))
        #expect(Self.keyReleases(nodes.a.effects) == 1)
    }

    /// A keyed reload on a whose claim is in flight, and a retry of it (the same key) on another
    /// connection, waiting for the first attempt's answer; a drains. Both are answered as a
    /// `connect` sent then, before their close; the key is given up once, and the claim won
    /// after the close is let go.
    @Test func aRetryWaitingOnItsFirstAttemptIsAnsweredByTheDrainAsItIs() throws {
        var nodes = TwoNodes()
        let (tab, first) = nodes.a.connect()
        _ = nodes.a.run(.closed(tab, abnormal: false))
        let hello = Self.keyedResume(first, key: "reload-4")
        nodes.a.completesCommits = false
        let reload = nodes.a.open()
        #expect(nodes.a.send(reload, "connect", hello).messages(to: reload).isEmpty, "its claim is in flight")
        let retry = nodes.a.open()
        #expect(nodes.a.send(retry, "connect", hello).messages(to: retry).isEmpty, "waits for the first attempt")
        let drained = nodes.a.run(.drain)
        Self.expectDrained(drained, reload)
        Self.expectDrained(drained, retry)
        #expect(Self.keyReleases(drained) == 1)
        nodes.a.completesCommits = true
        let won = nodes.a.completeCommits()
        #expect(won.messages(to: reload).isEmpty && won.messages(to: retry).isEmpty, "nothing after the close")
        Self.expectClosingWithoutScene(nodes.a.hub, reload)
        Self.expectClosingWithoutScene(nodes.a.hub, retry)
        #expect(try nodes.a.store.loadState().claims[Self.session(first)]?.node == nil, "the claim won is let go")
    }

    // MARK: Tickets

    enum TicketEnd: CaseIterable, Sendable { case arrives, waitExpires }

    /// A new window's keyed connect reaches b before its ticket's signal; b drains, answering it.
    /// When the ticket arrives (or the wait for it ends), the closed connect is not run again:
    /// the ticket stays unused and the key was given up with the drain's answer, so the retry
    /// through a opens the window.
    @Test(arguments: TicketEnd.allCases)
    func aTicketThatArrivesAfterTheDrainIsLeftForTheRetry(_ end: TicketEnd) throws {
        var nodes = TwoNodes()
        _ = try nodes.b.store.register(node: NodeID("b"), leaseMs: 60_000)
        let (tab, _) = nodes.a.connect()
        let opened = nodes.a.send(tab, "requestActivation", ["activity": ClusterSignalTests.budget])
        let ticket = try #require(opened.messages(to: tab).last { $0["type"] == "reply" }?["result"]?["ticket"])
        var hello = Self.hello
        hello["ticket"] = ticket
        hello["idempotencyKey"] = "window-1"
        let window = nodes.b.open()
        #expect(nodes.b.send(window, "connect", hello).messages(to: window).isEmpty, "waits for the ticket")
        let drained = nodes.b.run(.drain)
        Self.expectDrained(drained, window)
        #expect(Self.keyReleases(drained) == 1, "the key is given up with the drain's answer")
        let ended: [Effect]
        switch end {
        case .arrives: ended = TwoNodes.deliver(opened, to: &nodes.b)
        case .waitExpires:
            nodes.b.clock.advance(Millis(nodes.b.hub.settings.livenessProbeTimeoutMs) + 1)
            ended = nodes.b.run(.tick)
        }
        #expect(ended.messages(to: window).isEmpty, "nothing after the close")
        #expect(!ended.contains { if case .signal(let s) = $0, case .ticketUsed = s.kind { true } else { false } },
                "the ticket is not used")
        Self.expectClosingWithoutScene(nodes.b.hub, window)
        _ = nodes.b.run(.closed(window, abnormal: false))
        #expect(Self.keyReleases(nodes.b.effects) == 1, "given up once")

        let again = nodes.a.open()
        let reply = nodes.a.request(again, "connect", hello)
        #expect(reply["ok"] == true, "\(reply)")
        #expect(reply["result"]?["connectionOptions"]?["userActivities"]?.arrayValue?.first?["title"] == "Budget")
    }

    // MARK: Request keys

    /// A keyed reload on b waits for its key to be looked up in the store; b drains, answering
    /// it. When the look-up comes back (failed, or with the key reserved for b), the closed connect gets
    /// nothing, a reservation made for it is given up once, and the retry through a resumes
    /// the session.
    @Test(arguments: [false, true])
    func aKeyLookUpThatEndsAfterTheDrainLeavesTheKeyFree(lookUpFails: Bool) throws {
        var nodes = TwoNodes()
        _ = try nodes.b.store.register(node: NodeID("b"), leaseMs: 60_000)
        let (tab, first) = nodes.a.connect()
        _ = nodes.a.run(.closed(tab, abnormal: false))
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let hello = Self.keyedResume(first, key: "reload-3")
        nodes.b.completesLoads = false
        let reload = nodes.b.open()
        let sent = nodes.b.send(reload, "connect", hello)
        #expect(sent.messages(to: reload).isEmpty)
        #expect(sent.contains { if case .load(.reserveRequestKeys) = $0 { true } else { false } }, "looked up first")
        let drained = nodes.b.run(.drain)
        Self.expectDrained(drained, reload)
        let ended = lookUpFails ? nodes.b.failLoads("the database went away") : nodes.b.completeLoads()
        nodes.b.completesLoads = true
        #expect(ended.messages(to: reload).isEmpty, "nothing after the close")
        #expect(Self.keyReleases(ended) == (lookUpFails ? 0 : 1), "a reservation made for it is given up")
        Self.expectClosingWithoutScene(nodes.b.hub, reload)
        _ = nodes.b.run(.closed(reload, abnormal: false))
        #expect(Self.keyReleases(nodes.b.effects) == (lookUpFails ? 0 : 1), "once")
        #expect(nodes.b.store.reservations.isEmpty)

        let retry = nodes.a.open()
        let reply = nodes.a.request(retry, "connect", hello)
        #expect(reply["ok"] == true, "\(reply)")
        #expect(reply["result"]?["session"]?["persistentIdentifier"] == first["session"]?["persistentIdentifier"])
        #expect(reply["result"]?["created"] == false)
    }
}
