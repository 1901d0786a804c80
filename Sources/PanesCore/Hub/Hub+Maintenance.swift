import Logging

/// The passing of time: connect timeouts, unanswered liveness probes, expired tickets, idle
/// sessions; and draining on SIGTERM.
extension Hub {
    mutating func tick() {
        let now = now()
        expireTokens(now: now)
        for id in awaitingConnect.popExpired(now: now) {
            if case .awaitingConnect? = connections[id]?.phase {
                close(id, .connectTimeout, reason: "no connect within \(settings.connectTimeoutMs) ms")
            }
        }
        for (session, waiting) in pendingConnects where waiting.contains(where: { $0.deadline <= now }) {
            // The live scene never answered: it is a dead socket the kernel has not noticed yet.
            if let sceneID = liveScenes[session], let scene = scenes[sceneID] {
                logger.notice("scene did not answer a liveness probe; its session is resumed elsewhere",
                              metadata: ["scene": "\(sceneID)", "session": "\(session)"])
                close(scene.connection, .replaced, reason: "unresponsive; session resumed elsewhere")
                detach(sceneID, abnormal: false)
            } else {
                resolvePendingConnects(of: session)
            }
        }
        for (id, ticket) in tickets where ticket.expiresAt <= now {
            tickets[id] = nil
            if ticket.madeSession, liveScenes[ticket.session] == nil,
               let session = sessions[ticket.session], session.lastActiveAt == session.createdAt
            {
                discard(ticket.session, animation: .standard, reason: "its window ticket expired unused")
            }
        }
        expireFeatures(now: now)
        if now - lastIdleSweep >= 60_000 {
            lastIdleSweep = now
            let cutoff = now - Millis(settings.sessionMaxIdleMs)
            let idle = sessions.values.filter { liveScenes[$0.id] == nil && $0.lastActiveAt < cutoff }.map(\.id)
            for id in idle { discard(id, animation: .standard, reason: "idle longer than sessionMaxIdleMs") }
        }
    }

    /// Features expire their own timed state here (drags, throttled notifications).
    mutating func expireFeatures(now: Millis) {
        expireDrags(now: now)
        documentsTick(now: now)
    }

    mutating func drain() {
        guard !draining else { return }
        draining = true
        logger.notice("draining", metadata: ["scenes": "\(scenes.count)", "connections": "\(connections.count)"])
        for (session, waiting) in pendingConnects {
            for pending in waiting {
                fail(pending.requestID, request: "connect", PanesError(
                    .serverDraining, "the server is shutting down", retryAfterMs: settings.drainReconnectAfterMs),
                     to: pending.connection)
            }
            pendingConnects[session] = nil
        }
        let ids = connections.keys.sorted()
        var sceneConnections: [ConnectionID] = []
        for id in ids {
            if case .scene = connections[id]!.phase { sceneConnections.append(id) }
        }
        broadcast(.event(.goingAway(reconnectAfterMs: settings.drainReconnectAfterMs)), to: sceneConnections)
        for id in ids { close(id, .goingAway, reason: "server shutting down") }
    }

    /// Whether the hub has let go of every connection after a drain.
    public var drained: Bool { draining && connections.isEmpty }
}
