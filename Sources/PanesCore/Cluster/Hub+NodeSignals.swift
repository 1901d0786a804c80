import Logging

/// What one node asks of another: the holder of a session is the only node that talks to its
/// window and writes its record, so a request made on another node about a live session is
/// handed to the holder (`NodeSignal`). Tickets are broadcast, since nobody knows which node
/// the new window's connect will reach.
extension Hub {
    mutating func signal(_ kind: NodeSignal.Kind, to target: NodeID?) {
        guard let node else { return }
        effects.append(.signal(NodeSignal(from: node, to: target, kind: kind)))
    }

    mutating func received(_ signal: NodeSignal) {
        guard signal.from != node else { return }
        // Any signal says its sender is alive, one meant for another node too.
        let toldAll = heard(from: signal.from, asking: signal.kind == .scenesWanted)
        guard signal.to == nil || signal.to == node else { return }
        switch signal.kind {
        case .probe(let session):
            probeForRemote(session, asker: signal.from)
        case .live(let session):
            // The window on the other node answered: every connect waiting for it forks, and
            // the next connect for the session asks the holder again.
            holderAsked(session)
            // Unless the holder's lease has run out since, as the database counts it, or has
            // ended: it had closed that window before (a node stops serving before its lease
            // runs out there), so the answer is stale. The connects wait on: for the lease's
            // end, or (ended) for the takeover (`resumeTakeovers`).
            if cluster.claims[session]?.node == signal.from, leaseState(of: signal.from) != .running { return }
            for pending in pendingConnects.removeValue(forKey: session) ?? [] {
                if connections.isOpen(pending.connection) { fork(session, for: pending, reason: .holderAnsweredLive) }
            }
        case .notLive(let session):
            holderHasNoScene(session, holder: signal.from)
        case .activate(let session, let activity, let requestedBy):
            guard let live = scenes.live(of: session) else { return }
            send(.event(ServerEvent("activate", ["activity": activity, "requestedBy": requestedBy])), to: live.connection)
        case .refresh(let session, let fields):
            takeRemoteRefresh(session, fields)
        case .ticket(let json):
            guard let ticket = Ticket(json: json) else { return }
            tickets[ticket.id] = ticket
            ticketDeadlines.push(ticket.id, at: ticket.expiresAt)
            for waiter in cluster.ticketWaiters.removeValue(forKey: ticket.id) ?? [] { retryConnect(waiter) }
        case .ticketUsed(let id):
            tickets[id] = nil
        case .presence(let presence):
            takeRemotePresence(presence, from: signal.from)
        case .presenceRetold(let retold):
            takeRetoldPresence(retold, from: signal.from)
        case .people(let json):
            takeRemotePeople(json, from: signal.from)
        case .drag(let json):
            takeRemoteDrag(json, from: signal.from)
        case .dragEnded(let json):
            remoteDragEnded(json)
        case .dropOffered(let offer):
            takeRemoteDrop(offer, from: signal.from)
        case .dropReceived(let answer):
            remoteDropReceived(answer, from: signal.from)
        case .itemsDropped(let scene, let event):
            // From a node of the release before `dropOffered` (rolling upgrade): it answered
            // the drop `{"delivered"}` already and told the source, so the window gets the
            // items as that release did; gone meanwhile, it hears nothing.
            guard let target = scenes[SceneID(scene)] else { return }
            send(.event(ServerEvent("itemsDropped", event.objectValue ?? [:])), to: target.connection)
        case .scenes(let json):
            takeRemoteScenes(json, from: signal.from)
        case .scenesWanted:
            answerScenesWanted(by: signal.from, toldAll: toldAll)
            sharePeople(to: signal.from)
            retellPresence(to: signal.from)
        }
    }

    // MARK: Probes

    /// Another node has a connect for a session live here: ping its scene, and answer `live`
    /// on the pong. No pong by the deadline: the scene is a dead socket; it is closed and the
    /// session let go, so the other node resumes it.
    mutating func probeForRemote(_ session: SessionID, asker: NodeID) {
        guard let live = scenes.live(of: session) else {
            // Nothing live here: a claim left behind (its release may not have been written,
            // or not yet read there). The asker may take it at once; it is let go here too.
            // Not while a claim of this node's is in flight: its outcome decides.
            if !cluster.claiming.contains(session) { signal(.notLive(session), to: asker) }
            release(session)
            return
        }
        let first = cluster.remoteProbes[session] == nil
        cluster.remoteProbes[session, default: []].insert(asker)
        guard first else { return }
        let deadline = monotonic() + Millis(settings.livenessProbeTimeoutMs)
        cluster.remoteProbeDeadlines[session] = deadline
        probeDeadlines.push(session, at: deadline)
        effects.append(.probe(live.connection))
    }

    /// Asks the node holding a session that connects wait for whether its window is alive: a
    /// pong means a duplicated tab (they fork at once), silence a dead socket (it lets go and
    /// the first of them resumes). Once per wait, and only when the holder is known.
    mutating func askHolder(_ session: SessionID) {
        guard pendingConnects[session] != nil, !cluster.probesSent.contains(session),
              let holder = cluster.claims[session]?.node, holder != node, claimedElsewhere(session) else { return }
        cluster.probesSent.insert(session)
        signal(.probe(session), to: holder)
        watchHolders()
    }

    /// The scene answered a ping: tells the nodes that asked.
    mutating func answerProbes(of session: SessionID) {
        cluster.remoteProbeDeadlines[session] = nil
        for asker in (cluster.remoteProbes.removeValue(forKey: session) ?? []).sorted() {
            signal(.live(session), to: asker)
        }
    }

    /// A remote probe whose deadline passed without a pong: the scene is gone.
    mutating func expireProbe(of session: SessionID, now: Millis) {
        guard let deadline = cluster.remoteProbeDeadlines[session], deadline <= now else { return }
        cluster.remoteProbeDeadlines[session] = nil
        cluster.remoteProbes[session] = nil
        guard let scene = scenes.live(of: session) else { return }
        let sceneID = scene.id
        logger.notice("scene did not answer another node's liveness probe; its session is let go",
                      metadata: ["scene": "\(sceneID)", "session": "\(session)"])
        close(scene.connection, .replaced, reason: "unresponsive; session resumed elsewhere")
        detach(sceneID, abnormal: false)
    }

    // MARK: Windows on other nodes

    /// The node holding the session, when that is another live node.
    func holderOnAnotherNode(_ session: SessionID) -> NodeID? {
        guard !scenes.isLive(session), claimedElsewhere(session) else { return nil }
        return cluster.claims[session]?.node
    }

    /// A refresh made on another node for a session live here: applied by this node, which
    /// alone writes the session while its window is live. A window that closed meanwhile
    /// still has its refresh applied here, on the newest copy there is.
    mutating func takeRemoteRefresh(_ id: SessionID, _ fields: JSONValue) {
        guard var session = sessions[id] else { return }
        if let title = fields["title"]?.stringValue { session.title = title }
        if let subtitle = fields["subtitle"]?.stringValue { session.subtitle = subtitle }
        if let snapshot = fields["snapshot"], snapshot != .null { session.snapshot = snapshot }
        var replaced: JSONValue?
        if let activityJSON = fields["activity"], let metadataJSON = fields["metadata"],
           let activity = try? Activity(json: activityJSON, field: "activity"),
           let metadata = try? RestorationMetadata(json: metadataJSON) {
            session.restoration = Restoration(activity: activity, metadata: metadata)
            replaced = activity.json
        }
        store(session)
        if let live = scenes.live(of: id) {
            let requester = fields["requestedBy"] ?? .null
            send(.event(.sessionRefreshed(sessionSummary(session), activity: replaced, requester: requester)),
                 to: live.connection)
        }
        sessionsChanged(for: session.owner)
    }

    // MARK: Tickets

    // Every node hears of a ticket (`Coordination.shareTicket`), so the new window can connect
    // to any of them.

    /// A connect with a ticket not heard of yet: waits for its signal, up to the probe timeout.
    mutating func waitForTicket(_ id: String, connection: ConnectionID, requestID: RequestID,
                                request: ConnectRequest) {
        let deadline = monotonic() + Millis(settings.livenessProbeTimeoutMs)
        cluster.ticketWaiters[id, default: []].append(WaitingConnect(connection: connection, requestID: requestID,
                                                                   request: request, deadline: deadline))
        cluster.ticketWaitDeadlines.push(id, at: deadline)
        connections.setPhase(.answering(SessionID("")), of: connection)
    }

    /// A connect resuming a session not read here yet: retried once the records are read.
    mutating func waitForRecords(connection: ConnectionID, requestID: RequestID, request: ConnectRequest) {
        let waiter = WaitingConnect(connection: connection, requestID: requestID, request: request,
                                  deadline: monotonic() + Millis(settings.livenessProbeTimeoutMs))
        cluster.recordWaiters.append((cluster.recordLoadsStarted, waiter))
        connections.setPhase(.answering(SessionID("")), of: connection)
        if cluster.recordsLoading { cluster.recordsWanted = true } else { loadRecordChanges() }
    }

    /// Runs a waiting connect again; it may still wait for records once if it waited for its
    /// ticket (the ticket's signal can come before the record of its session).
    mutating func retryConnect(_ waiter: WaitingConnect, afterRecords: Bool = false) {
        guard connections.isOpen(waiter.connection) else { return }
        connections.setPhase(.awaitingConnect, of: waiter.connection)
        do throws(PanesError) {
            try connect(waiter.request, requestID: waiter.requestID, on: waiter.connection, waitForTicket: false,
                        waitForRecords: !afterRecords)
        } catch {
            fail(waiter.requestID, request: "connect", error, to: waiter.connection)
        }
    }

    /// The connects waiting on the cluster: for their claim's outcome, their ticket's signal,
    /// or a record read (`Coordination.connectsWaiting`).
    func connectsWaitingOnTheCluster() -> [ReplyRef] {
        var waiting: [ReplyRef] = []
        for case .claim(_, _, let connect?) in commits.pending.values {
            waiting.append(ReplyRef(connection: connect.connection, id: connect.requestID))
        }
        for waiter in cluster.ticketWaiters.values.joined() {
            waiting.append(ReplyRef(connection: waiter.connection, id: waiter.requestID))
        }
        for (_, waiter) in cluster.recordWaiters {
            waiting.append(ReplyRef(connection: waiter.connection, id: waiter.requestID))
        }
        return waiting
    }

    /// Tickets whose signal never came: their connects fail as any unknown ticket does.
    mutating func expireTicketWaits(now: Millis) {
        for (_, id) in cluster.ticketWaitDeadlines.popDue(now: now) {
            guard let waiting = cluster.ticketWaiters[id] else { continue }
            let due = waiting.filter { $0.deadline <= now }
            cluster.ticketWaiters[id] = waiting.filter { $0.deadline > now }
            if cluster.ticketWaiters[id]?.isEmpty == true { cluster.ticketWaiters[id] = nil }
            for waiter in due { retryConnect(waiter) }
        }
    }
}

extension Ticket {
    /// The form a ticket travels in between nodes. The session it was made with stays the
    /// issuing node's to discard if it goes unused.
    var json: JSONValue {
        ["id": .string(id), "workspace": .string(owner.workspace), "user": .string(owner.user),
         "session": .string(session.rawValue), "handedOver": .array(handedOver.map(\.json)), "expiresAt": .int(expiresAt)]
    }

    init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let workspace = json["workspace"]?.stringValue,
              let user = json["user"]?.stringValue, let session = json["session"]?.stringValue,
              let expiresAt = json["expiresAt"]?.intValue else { return nil }
        var handedOver: [Activity] = []
        for item in json["handedOver"]?.arrayValue ?? [] {
            guard let activity = try? Activity(json: item, field: "handedOver") else { return nil }
            handedOver.append(activity)
        }
        self.init(id: id, owner: OwnerKey(workspace: workspace, user: user), session: SessionID(session),
                  handedOver: handedOver, expiresAt: expiresAt, madeSession: false)
    }
}
