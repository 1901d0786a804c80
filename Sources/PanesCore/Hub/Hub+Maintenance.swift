import Logging

/// The passing of time: connect timeouts, unanswered liveness probes, expired tickets and
/// tokens, idle sessions; and draining on SIGTERM.
extension Hub {
    /// Runs whatever is due; everything else waits for `nextDeadline`.
    mutating func tick() {
        let now = now()
        let clock = monotonic()
        expireTokens(now: now)
        for id in awaitingConnect.popExpired(now: clock) {
            switch connections[id]?.phase {
            case .awaitingConnect?:
                close(id, .connectTimeout, reason: "no connect within \(settings.connectTimeoutMs) ms")
            case .answering?:
                // Its `connect` still waits (a probe, a claim, a holder elsewhere, a request key's
                // reservation) and may yet fail, which returns it to `.awaitingConnect`: it keeps
                // a deadline, a whole timeout from now (review R1).
                queueConnectTimeout(id, now: clock)
            default:
                break
            }
        }
        for (_, session) in probeDeadlines.popDue(now: clock) {
            expireRemoteProbe(of: session, now: clock)
            guard let waiting = pendingConnects[session], waiting.contains(where: { $0.deadline <= clock }) else { continue }
            // The live scene never answered: it is a dead socket the kernel has not noticed yet.
            if let scene = scenes.live(of: session) {
                let sceneID = scene.id
                logger.notice("scene did not answer a liveness probe; its session is resumed elsewhere",
                              metadata: ["scene": "\(sceneID)", "session": "\(session)"])
                close(scene.connection, .replaced, reason: "unresponsive; session resumed elsewhere")
                detach(sceneID, abnormal: false)
            } else {
                resolvePendingConnects(of: session)
            }
        }
        for (_, id) in ticketDeadlines.popDue(now: now) {
            guard let ticket = tickets[id], ticket.expiresAt <= now else { continue }
            tickets[id] = nil
            if ticket.madeSession, !scenes.isLive(ticket.session),
               let session = sessions[ticket.session], session.lastActiveAt == session.createdAt
            {
                discard(ticket.session, animation: .standard, reason: "its window ticket expired unused")
            }
        }
        expireFeatures(now: now, clock: clock)
        expireRequestKeys(now: now)
        coordinationDue(now: clock)
        for (deadline, id) in sessions.popIdle(now: now) {
            guard let session = sessions[id], !scenes.isLive(id) else { continue }
            // Live on another node: that node keeps it active.
            if keptActiveElsewhere(id) { continue }
            let due = session.lastActiveAt + Millis(settings.sessionMaxIdleMs)
            if due > now {
                // Active since this entry was queued: look again when it would be idle.
                if due != deadline { sessions.idleAgain(id, at: due) }
                continue
            }
            discard(id, animation: .standard, reason: "idle longer than sessionMaxIdleMs")
        }
    }

    /// Puts the connection in the connect timeout's queue, `connectTimeoutMs` after `now` (the
    /// monotonic clock): when it opens, and again each time its deadline finds its `connect`
    /// still being answered. Deadlines are queued on one clock with one timeout, so the queue
    /// stays in order.
    mutating func queueConnectTimeout(_ connection: ConnectionID, now: Millis) {
        if awaitingConnect.isFull {
            // Before the queue grows, the connections that connected since (or are gone) leave it.
            let connections = self.connections
            awaitingConnect.dropSettled(connections.isPastConnect)
        }
        awaitingConnect.append(connection, deadline: now + Millis(settings.connectTimeoutMs))
    }

    /// When the hub next has something to do (a timeout, an expiry, an announcement), on the
    /// monotonic clock (`monotonic`), so the runtime sleeps until then instead of waking on a
    /// fixed tick. Deadlines kept on the wall clock (expiries that are stored, signed or shared
    /// timestamps: tickets, idle sessions, drags, tokens, links, request keys) are converted as
    /// the clocks stand now.
    public var nextDeadline: Millis? {
        // Chained rather than an array's minimum: read after every event (issue 27).
        let documentDeadlines = documents.nextDeadlines
        let local = awaitingConnect.nextDeadline.earlier(probeDeadlines.nextDeadline).earlier(coordinationDeadline)
            .earlier(documentDeadlines.announcement).earlier(documentDeadlines.presence)
            .earlier(versions.pauseDeadlines.nextDeadline)
        let wall = ticketDeadlines.nextDeadline.earlier(sessions.nextIdleDeadline).earlier(drags.nextDeadline)
            .earlier(scenes.nextTokenDeadline).earlier(rights.expiries.nextDeadline).earlier(requestKeys.nextDeadline)
        guard let wall else { return local }
        let clock = monotonic()
        // Only a wall deadline near `Millis.min` overflows here: long past, so due now.
        let (left, longPast) = wall.subtractingReportingOverflow(now())
        guard !longPast else { return clock }
        let (converted, outOfRange) = clock.addingReportingOverflow(left)
        return min(local ?? .max, outOfRange ? (left < 0 ? clock : .max) : converted)
    }

    /// Work to do once, after loading: sessions that were live when the server last stopped
    /// count as active until now (see `init`); writing that down keeps it true after another
    /// crash. Sessions that referred to a missing document are written without it.
    public mutating func start() -> [Effect] {
        for id in recoveredSessions.sorted() {
            if let session = sessions[id] { persist(.putSession(session)) }
        }
        recoveredSessions = []
        defer { effects.removeAll(keepingCapacity: true) }
        return effects
    }

    /// Features expire their own timed state here: drags and links, whose expiries are
    /// wall-clock timestamps (`now`), and throttled notifications, on the monotonic `clock`.
    mutating func expireFeatures(now: Millis, clock: Millis) {
        expireDrags(now: now)
        expireLinks(now: now)
        presenceTick(now: clock)
        documentsTick(now: clock)
        versionsTick(now: clock)
        shareScenesTick(now: clock)
    }

    /// SIGTERM: every scene is told `goingAway`, and every `connect` still being answered gets
    /// what a `connect` sent now gets (`server_draining` with `retryAfterMs`), whatever it waits
    /// on (`connectsUnderWay`); then every connection is closed 1001, a scene owed the answer to
    /// a write under way once that is out (`closeAnswered`). What a wait brings after the close
    /// finds its connection closing (`Connections.isOpen`) and answers nothing more: a claim won
    /// then is let go, a key reserved then is given up.
    mutating func drain() {
        guard !draining else { return }
        draining = true
        logger.notice("draining", metadata: ["scenes": "\(scenes.count)", "connections": "\(connections.count)"])
        // Drops waiting for another node's answer are settled now, while the drain waits for
        // their commits (`Hub+RemoteDrops.swift`); their droppers are owed the answer.
        takeBackRemoteDrops()
        let underWay = connectsUnderWay()
        // An HTTP API request under way is answered as usual (its service scene ends with its
        // answer); the drain waits for it as for any write.
        let ids = connections.ids.filter { !Self.isServiceConnection($0) }
        var sceneConnections: [ConnectionID] = []
        for id in ids {
            if case .scene = connections[id]!.phase { sceneConnections.append(id) }
        }
        broadcast(.event(.goingAway(reconnectAfterMs: settings.drainReconnectAfterMs)), to: sceneConnections)
        let refusal = PanesError(.serverDraining, "the server is shutting down", retryAfterMs: settings.drainReconnectAfterMs)
        let owed = commits.pending.isEmpty && commits.preferenceWriters.isEmpty && commits.documentWriters.isEmpty
            ? [] : connectionsAwaitingCommits()
        for id in ids {
            // Still answering: not answered meanwhile by its key's first attempt, which tells the
            // retries waiting on it what it is told (`replyLeaving`).
            if case .answering? = connections[id]?.phase, let request = underWay[id] {
                fail(request, request: ConnectRequest.type, refusal, to: id)
            }
            if owed.contains(id) {
                // Its writes' answers come with their commits: it takes no more requests, and
                // is closed once they are out.
                _ = connections.markClosing(id)
                commits.closingAfterAnswers.insert(id)
            } else {
                close(id, .goingAway, reason: "server shutting down")
            }
        }
    }

    /// Closes the scenes a drain left open for their writes' answers, once those are out (or
    /// the socket went).
    mutating func closeAnswered() {
        let owed = connectionsAwaitingCommits()
        for id in commits.closingAfterAnswers.sorted() where !owed.contains(id) {
            commits.closingAfterAnswers.remove(id)
            guard connections[id] != nil else { continue }
            effects.append(.close(id, .goingAway, reason: "server shutting down"))
        }
    }

    /// The `connect` each connection still answering waits with, wherever it waits: on the
    /// session's live scene or its holder elsewhere (`pendingConnects`: a probe, a takeover's
    /// read, a deciding node check), on a request key (its look-up, or its first attempt), or
    /// on another node or the shared store (a claim, a ticket, a record read:
    /// `connectsWaitingElsewhere`). A connect waits in one of them at a time.
    func connectsUnderWay() -> [ConnectionID: RequestID] {
        var underWay: [ConnectionID: RequestID] = [:]
        for waiting in pendingConnects.values {
            for pending in waiting { underWay[pending.connection] = pending.requestID }
        }
        for ref in requestKeys.waitingConnects + connectsWaitingElsewhere() { underWay[ref.connection] = ref.id }
        return underWay
    }

    /// Whether the hub has let go of every connection after a drain.
    public var drained: Bool { draining && connections.isEmpty }
}
