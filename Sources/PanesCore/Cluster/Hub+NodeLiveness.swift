import Logging

/// Whether the node holding a session is still there, asked of the store rather than guessed
/// from the time: a connect waiting for a session held on another node has the store checked
/// at once and every `nodeCheckIntervalMs` while it waits (a killed node's lock is free the
/// moment its connection drops, a lease that ran out is seen within the interval), and is
/// forked at its deadline only if a check made then still finds the holder alive, its lease
/// running (one whose lease ran out but could not be ended yet is waited for). A node that
/// holds a claim but no scene answers a probe with `notLive`, and keeps retrying a release it
/// could not write, so a window whose scene ended during an outage resumes, never forks.
extension Hub {
    /// Asks the store which nodes are gone (`Effect.checkNodes`); one check in flight at a
    /// time, a second asked meanwhile runs after it.
    /// - Returns: the number of the check whose answer reflects the store as of now.
    @discardableResult
    mutating func checkNodes() -> Int {
        if cluster.checksStarted > cluster.checksAnswered {
            cluster.checkWanted = true
            return cluster.checksStarted + 1
        }
        cluster.checksStarted += 1
        effects.append(.checkNodes)
        return cluster.checksStarted
    }

    /// A connect now waits for a session another node holds: is that node there at all? Asked
    /// now, and again every `nodeCheckIntervalMs` for as long as connects wait.
    mutating func watchHolders() {
        checkNodes()
        if cluster.nextCheckAt == nil { cluster.nextCheckAt = monotonic() + Millis(settings.nodeCheckIntervalMs) }
    }

    /// The periodic check while connects wait for sessions held elsewhere.
    mutating func checkNodesWhileWaiting(now: Millis) {
        guard let at = cluster.nextCheckAt, at <= now else { return }
        cluster.nextCheckAt = nil
        guard pendingConnects.keys.contains(where: { !scenes.isLive($0) && claimedElsewhere($0) }) else { return }
        checkNodes()
        cluster.nextCheckAt = now + Millis(settings.nodeCheckIntervalMs)
    }

    /// A check's answer: the nodes gone now, or nil when the store could not be asked.
    /// Connects that waited for it to decide are resumed (their holder is gone), forked (it is
    /// there and did not answer in time), or told to retry (nobody could tell).
    mutating func nodesChecked(_ gone: [NodeID]?) {
        cluster.checksAnswered = min(cluster.checksAnswered + 1, cluster.checksStarted)
        let answered = cluster.checksAnswered
        if let gone { nodesExpired(gone) }
        if cluster.checkWanted {
            cluster.checkWanted = false
            checkNodes()
        }
        let deciding = pendingConnects.filter { $0.value.contains { ($0.decidingCheck ?? .max) <= answered } }
        for session in deciding.keys.sorted() {
            guard gone != nil else {
                failUndecided(session, answered: answered)
                continue
            }
            resolvePendingConnects(of: session)
        }
    }

    /// Connects whose deciding check could not reach the store: whether their session's
    /// holder lives is unknown, and neither a fork nor a takeover would be the truth.
    mutating func failUndecided(_ session: SessionID, answered: Int) {
        guard let waiting = pendingConnects[session] else { return }
        let undecided = waiting.filter { ($0.decidingCheck ?? .max) <= answered }
        pendingConnects[session] = waiting.filter { ($0.decidingCheck ?? .max) > answered }
        if pendingConnects[session]?.isEmpty == true {
            pendingConnects[session] = nil
            // Nobody waits for the holder's answer now: the next connect asks it again, and the
            // session leaves `probesSent` (it stayed there for good, and no later connect for
            // the session asked its holder, waiting out the whole deadline instead).
            holderAsked(session)
        }
        for pending in undecided where connections.isOpen(pending.connection) {
            connections.setPhase(.awaitingConnect, of: pending.connection)
            fail(pending.requestID, request: "connect", PanesError(
                .storageFailed, "whether the session is live on another node could not be checked; retry",
                retryAfterMs: Int(Backoff.sharedStore.maxMs)), to: pending.connection)
        }
    }

    /// A connect past its deadline for a session another node still holds, as far as this
    /// node knows: forked only once a check started now says that node is alive.
    /// - Returns: whether the connect goes on waiting (for that check).
    mutating func awaitDecidingCheck(_ pending: PendingConnect, for session: SessionID) -> Bool {
        if let check = pending.decidingCheck, check <= cluster.checksAnswered { return false }
        var deciding = pending
        deciding.decidingCheck = pending.decidingCheck ?? checkNodes()
        pendingConnects[session, default: []].append(deciding)
        return true
    }

    // MARK: Holders whose lease ran out

    /// Another node's lease as this node sees it: ended once the store said so (`expired`),
    /// lapsed while the store's last read of the nodes alive left it out, running otherwise.
    func leaseState(of other: NodeID) -> NodeLeaseState {
        if cluster.expired.contains(other) { return .ended }
        guard let running = cluster.leasesRunning, !running.contains(other) else { return .running }
        return .lapsed
    }

    /// Whether the session's holder on another node has let its lease run out, as the
    /// database counts it, without its end being seen here.
    func holderLeaseLapsed(_ session: SessionID) -> Bool {
        guard let holder = cluster.claims[session]?.node, holder != node else { return false }
        return leaseState(of: holder) == .lapsed
    }

    /// A connect past its deadline (its deciding check answered) whose session's holder let its
    /// lease run out without the end being seen: a node check cannot end a lease while a
    /// transaction of the node holds its row (`endLease` waits a tenth of a lease, then leaves
    /// it to the next check), and one cut off by a partition lasts until the database ends it,
    /// a lease after it went idle (`idle_in_transaction_session_timeout`). Such a holder serves
    /// no window, so the connect is not forked (issue 27 §3: it was, and the window lost its
    /// session): it waits for the end, which resumes it (`nodesExpired`), checks going on
    /// meanwhile (`watchHolders`), for up to a lease and two heartbeats more. After that it is
    /// told to retry: neither a fork nor a takeover would be the truth.
    mutating func awaitHolderLeaseEnd(_ pending: PendingConnect, for session: SessionID) {
        let now = monotonic()
        let until = pending.leaseEndDeadline ?? now + Millis(settings.nodeLeaseMs + 2 * settings.nodeHeartbeatMs)
        guard until > now else {
            connections.setPhase(.awaitingConnect, of: pending.connection)
            fail(pending.requestID, request: "connect", PanesError(
                .storageFailed, "the node holding the session is out of reach and its lease has not ended yet; retry",
                retryAfterMs: settings.nodeHeartbeatMs), to: pending.connection)
            return
        }
        var waiting = pending
        waiting.leaseEndDeadline = until
        waiting.deadline = until
        waiting.decidingCheck = nil
        pendingConnects[session, default: []].append(waiting)
        probeDeadlines.push(session, at: until)
        watchHolders()
    }

    // MARK: Releases that could not be written

    /// A release the store refused (it was away): the session stays claimed by this node in
    /// the store although no scene holds it. Tried again, with every other such release, after
    /// the backoff; meanwhile a probe for it is answered `notLive`.
    mutating func releaseFailed(_ session: SessionID) {
        cluster.unreleased.insert(session)
        if cluster.releaseRetryAt == nil { cluster.releaseRetryAt = monotonic() + cluster.releaseBackoff.failed() }
    }

    mutating func retryReleases(now: Millis) {
        guard let at = cluster.releaseRetryAt, at <= now else { return }
        cluster.releaseRetryAt = nil
        let sessions = cluster.unreleased.sorted()
        cluster.unreleased = []
        for session in sessions where !scenes.isLive(session) && pendingConnects[session] == nil {
            release(session)
        }
    }

    /// The holder answered that no scene of the session lives there: the claim it left is no
    /// reason to wait. What the holder wrote of the session before it answered is committed (a
    /// signal travels with the writes before it), so the records are read first, and the
    /// session is resumed from its newest copy (`claimsLeftBehind`).
    mutating func holderHasNoScene(_ session: SessionID, holder: NodeID) {
        guard cluster.claims[session]?.node == holder, pendingConnects[session] != nil else { return }
        cluster.leftBehind.append((cluster.recordLoadsStarted, session, holder))
        loadRecordChanges()
    }

    /// After a record read: claims whose holder said it has no scene are taken as let go (at
    /// the epoch known here; if the holder attached a scene since, the claim made now conflicts
    /// and the connect waits as for any held session).
    mutating func claimsLeftBehind(readBy finished: Int) {
        guard !cluster.leftBehind.isEmpty else { return }
        let ready = cluster.leftBehind.filter { $0.after < finished }
        cluster.leftBehind.removeAll { $0.after < finished }
        for entry in ready {
            guard let claim = cluster.claims[entry.session], claim.node == entry.holder else { continue }
            cluster.claims[entry.session] = SessionClaim(node: nil, epoch: claim.epoch)
            // A drop the holder settled for the session and did not send is found by the claim
            // made now, as any claim finds one (`heldDropsFound`).
            resolvePendingConnects(of: entry.session)
        }
    }
}
