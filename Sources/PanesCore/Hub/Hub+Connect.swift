import Logging

/// Connecting scenes: new sessions, resumption with the secret, tickets, and the fork of a
/// duplicated tab. A tab never silently takes over another live tab's session: a `connect`
/// naming a session whose scene still answers pings gets a fork instead.
extension Hub {
    /// - Parameter waitForTicket: in a cluster, a ticket or session not heard of yet may still
    ///   be on its way from another node: the connect waits for it once.
    /// - Parameter request: consumed, so that a replay can amend it and the pending connect take
    ///   it without a copy of its own (a copy retains and releases each of its strings).
    mutating func connect(_ request: consuming ConnectRequest, requestID: RequestID, on connection: ConnectionID,
                          waitForTicket: Bool = true, waitForRecords: Bool = true) throws(PanesError) {
        guard request.protocolVersion == Self.protocolVersion else {
            throw PanesError(.unsupportedProtocol,
                             "this server speaks protocol \(Self.protocolVersion), not \(request.protocolVersion)",
                             field: "protocol")
        }
        guard !draining else {
            throw PanesError(.serverDraining, "the server is shutting down", retryAfterMs: settings.drainReconnectAfterMs)
        }
        if refusedWhileLeaseLost(connection) { return }
        let identity: Authenticator.Identity
        do throws(PanesError) {
            identity = try authenticate(request.credentials, workspace: request.workspace, on: connection)
        } catch where error.code == .rateLimited {
            refuseLimited(error, requestID: requestID, on: connection)
            return
        }
        let owner = OwnerKey(workspace: request.workspace, user: identity.user)
        let target: SessionID
        var handedOver: [Activity] = []
        // Where a proven session was found, for the attach that may follow in this event.
        var sessionSlot: DenseTable<SessionID, SceneSession>.Slot?
        if var replay = request.replay {
            // A retry of a keyed connect that was answered: the session it attached, again.
            if connectWaitsForRecords(of: replay.session, allowed: waitForRecords, connection: connection,
                                      requestID: requestID, request: request) { return }
            guard let session = sessions[replay.session], session.owner == owner else {
                throw PanesError(.sessionNotFound, "the session this connect made is gone", field: "session")
            }
            if let resume = request.resume, resume.id == session.id,
               secretHasher.matches(resume.secret, stored: session.secretHash) {
                replay.provenSecret = resume.secret
            }
            request.replay = replay
            target = session.id
        } else if let ticketID = request.ticket {
            if connectWaitsForTicket(ticketID, allowed: waitForTicket, connection: connection, requestID: requestID,
                                     request: request) { return }
            // The ticket's signal may come before the record of the session it opens.
            if connectWaitsForRecords(of: tickets[ticketID]?.session, allowed: waitForRecords, connection: connection,
                                      requestID: requestID, request: request) { return }
            guard let ticket = tickets[ticketID], ticket.owner == owner, ticket.expiresAt > now(),
                  sessions[ticket.session] != nil
            else {
                throw PanesError(.ticketInvalid, "the window ticket is unknown, used, expired or not yours", field: "ticket")
            }
            tickets[ticketID] = nil
            ticketUsed(ticketID)
            target = ticket.session
            handedOver = ticket.handedOver
        } else if let resume = request.resume {
            // Made on another node a moment ago, perhaps: read the records, then look again.
            if connectWaitsForRecords(of: resume.id, allowed: waitForRecords, connection: connection,
                                      requestID: requestID, request: request) { return }
            guard let proven = provenSession(resume, owner: owner) else {
                throw PanesError(.sessionNotFound, "no session of yours has that identifier and secret", field: "session")
            }
            target = proven.id
            sessionSlot = proven.slot
        } else {
            try connectNewSession(connection, requestID: requestID, request: request, identity: identity, owner: owner)
            return
        }

        let pending = PendingConnect(connection: connection, requestID: requestID, request: request, identity: identity,
                                     handedOver: handedOver, deadline: monotonic() + Millis(settings.livenessProbeTimeoutMs))
        if let live = scenes.liveID(of: target) {
            // Someone holds this session. Ask their connection whether it is still there before
            // deciding between a resume (it was a dead socket) and a fork (a duplicated tab).
            let first = pendingConnects[target] == nil
            wait(pending, for: target)
            if first { effects.append(.probe(scenes[live]!.connection)) }
            return
        }
        // Live on another node, or about to be: the connect waits for it.
        if connectWaitsForHolder(pending, of: target) { return }
        resume(target, for: pending, sessionSlot: sessionSlot)
    }

    /// A `connect` naming no session: a new one, attached at once.
    private mutating func connectNewSession(_ connection: ConnectionID, requestID: RequestID, request: ConnectRequest,
                                            identity: Authenticator.Identity, owner: OwnerKey) throws(PanesError) {
        var (session, secret) = try makeSession(owner: owner, configuration: configurations[0], attaching: true)
        // Stored live from the start, as the attach below would make it: the session is then
        // written once, in the commit its reply waits for, not a second time quietly after it.
        session.liveSince = session.lastActiveAt
        sessions.put(session)
        persist([.putSession(session)] + newSessionClaims(session.id) + sessionWebhook(.sessionCreated, session))
        attach(connection, requestID: requestID, request: request, identity: identity, session: session.id,
               secret: secret, handedOver: [], created: true, forkedFrom: nil, storedLive: true)
    }

    /// Puts a connect in line for a session that is held, until it is let go or the deadline.
    mutating func wait(_ pending: PendingConnect, for target: SessionID) {
        pendingConnects[target, default: []].append(pending)
        probeDeadlines.push(target, at: pending.deadline)
        connections.setPhase(.answering(target), of: pending.connection)
    }

    /// Attaches the connection to a session nobody holds live. In a cluster the node first
    /// claims the session's lease (`claimsBeforeAttach`), and attaches once the claim is won.
    /// - Parameter sessionSlot: where the session was found earlier in this event (`Sessions.slot`).
    mutating func resume(_ target: SessionID, for pending: PendingConnect,
                         sessionSlot: DenseTable<SessionID, SceneSession>.Slot? = nil) {
        if claimsBeforeAttach(target, for: pending) { return }
        attach(pending.connection, requestID: pending.requestID, request: pending.request, identity: pending.identity,
               session: target, secret: Self.provenSecret(of: pending.request), handedOver: pending.handedOver,
               created: pending.request.replay?.created ?? false, forkedFrom: pending.request.replay?.forkedFrom,
               sessionSlot: sessionSlot)
    }

    /// A new session record, not yet stored, and its secret: the record keeps only its hash,
    /// so this is the one moment the secret exists, to be handed to the client or dropped.
    /// - Parameter attaching: the caller attaches a scene to it before it returns to the loop
    ///   (`attach` cannot fail), so it gets no idle deadline until that scene ends.
    mutating func makeSession(owner: OwnerKey, configuration: SceneConfiguration, attaching: Bool = false) throws(PanesError)
        -> (session: SceneSession, secret: String) {
        let count = sessions.count(of: owner)
        guard count < settings.maxSessionsPerUser else {
            throw PanesError(.tooMany, "\(owner) already has \(count) sessions (setting `maxSessionsPerUser`); discard some")
        }
        let secret = ids.secret()
        let session = SceneSession(id: ids.sessionID(), secretHash: secretHasher.digest(secret), owner: owner,
                                   role: configuration.role, configuration: configuration.name,
                                   createdAt: now(), lastActiveAt: now())
        sessions.insert(session, attaching: attaching)
        return (session, secret)
    }

    /// The secret a resuming `connect` proved (its `session.secret`), to echo in the reply; nil
    /// for a ticket, which proves no secret: the session then gets a new one.
    static func provenSecret(of request: ConnectRequest) -> String? {
        if let replay = request.replay { return replay.provenSecret }
        return request.ticket == nil ? request.resume?.secret : nil
    }

    /// The held session `resume` names, when it is the owner's and the secret is its own; nil
    /// otherwise. Read in place (`update` changes nothing here): `sessions[resume.id]` copied
    /// the whole session, and dropped it, on every resume (issue 27).
    /// Hands back its slot too, for the attach that follows (`Sessions.update(_:hint:_:)`).
    private mutating func provenSession(_ resume: ConnectRequest.Resume, owner: OwnerKey)
        -> (id: SessionID, slot: DenseTable<SessionID, SceneSession>.Slot)? {
        // The digest alone, not a copy of the hasher (its three closures retained and released).
        let digest = secretHasher.digest
        guard let slot = sessions.slot(of: resume.id) else { return nil }
        let proven = sessions.update(resume.id, hint: slot) { session -> SessionID? in
            // `SecretHasher.matches`: the stored hash compared with the secret's.
            session.owner == owner && digest(resume.secret) == session.secretHash ? session.id : nil
        }
        return (proven ?? nil).map { ($0, slot) }
    }

    /// Makes the connection a scene of the session and replies to its `connect`.
    /// - Parameters:
    ///   - secret: the session's secret for the reply: the new session's, or the one a resume
    ///     proved. Nil (a ticket) issues a new one, which replaces the old.
    ///   - storedLive: the session was just made and stored live (`connectNewSession`, `fork`): its
    ///     times are left as stored, and not written again.
    ///   - sessionSlot: where the session was found earlier in this event, if it was
    ///     (`Sessions.update(_:hint:_:)` checks it still is).
    mutating func attach(_ connection: ConnectionID, requestID: RequestID, request: ConnectRequest,
                         identity: Authenticator.Identity, session sessionID: SessionID, secret: String?,
                         handedOver: [Activity], created: Bool, forkedFrom: SessionID?, storedLive: Bool = false,
                         sessionSlot: DenseTable<SessionID, SceneSession>.Slot? = nil) {
        let now = now()
        let handedSecret: String
        if let secret {
            handedSecret = secret
        } else {
            handedSecret = ids.secret()
            let hash = secretHasher.digest(handedSecret)
            persist(.putSession(sessions.update(sessionID) { session in
                session.secretHash = hash
                return session
            }!))
        }
        // Read and changed in place: one lookup of the session, no copy put back. The closure
        // cannot reach the hub (its sessions are being changed), so what it needs is read first.
        let records = documents.records
        let policy = RestorationPolicy(settings, now: now)
        // The closure hands back the session alone: a tuple holding it came back as an optional
        // copied twice through its type's metadata (issue 27).
        var forgets = false
        var status = RestorationStatus.cleanStart
        let session = sessions.update(sessionID, hint: sessionSlot) { session in
            // A document deleted while its deletion could not reach this session's record (a
            // save that raced the deletion): forgotten now, so nothing points at a dead identifier.
            forgets = Self.refersToMissingDocument(session, in: records)
            if forgets { session.forgetDocument() }
            status = policy.status(of: session, handedOver: handedOver)
            if status == .cleanStart {
                session.restoration = nil
                session.failedRestores = 0
            }
            if !storedLive {
                session.lastActiveAt = now
                session.liveSince = now
            }
            return session
        }!
        if status == .cleanStart || forgets {
            persist(.putSession(session))
        } else if !storedLive {
            // Only bookkeeping for a restart after a crash (see `liveSince`): the reply does not
            // wait for it.
            effects.append(.persistQuietly(counted([.putSessionLiveness(SessionLiveness(of: session))])))
            sessionWritten(sessionID)
        }
        let sceneID = ids.sceneID()
        // Without a lifecycle report the app state is settled now, in the attach's look-up of
        // the owner; a report settles it when it moves the scene's state. The scene is closed
        // when its token stops being accepted (`Scenes` queues that).
        let appStateChange = scenes.attach(owner: session.owner, userName: identity.name, clientVersion: request.clientVersion,
                                           settling: request.visible == nil) { user in
            var scene = Scene(id: sceneID, connection: connection, session: sessionID, user: user, role: identity.role,
                              traits: request.traits)
            if status == .restored { scene.restoredAt = now }
            scene.tokenExpiresAt = identity.expiresAt
            return scene
        }
        connections.setPhase(.scene(sceneID), of: connection)
        metrics.lifecycle[.willConnect] += 1
        logger.info("willConnect", metadata: [
            "scene": "\(sceneID)", "session": "\(sessionID)", "owner": "\(session.owner)",
            "created": "\(created)", "forkedFrom": "\(forkedFrom?.rawValue ?? "-")", "restoration": "\(status.rawValue)",
            "width": "\(request.traits.width.rawValue)", "pointer": "\(request.traits.pointer.rawValue)",
        ])

        let reply = ConnectReply(scene: sceneID, identity: identity, session: session, secret: handedSecret,
                                 created: created, forkedFrom: forkedFrom, handedOver: handedOver, restoration: status,
                                 traits: request.traits, constants: connectReplyConstants)
        send(.connected(requestID, reply), to: connection)
        readHeldDropsIfAny(of: sessionID)
        if let visible = request.visible {
            _ = reportLifecycle(visible: visible, focused: request.focused ?? visible, scene: sceneID)
        } else {
            appStateChanged(session.owner, appStateChange)
            sessionsChanged(for: session.owner)
        }
    }

    // MARK: Liveness probes

    /// The session's live scene answered: it is a real, separate window. Everyone waiting gets a fork.
    mutating func pongReceived(from connection: ConnectionID) {
        if case .scene(let sceneID)? = connections[connection]?.phase, let scene = scenes[sceneID] {
            answerRemoteProbes(of: scene.session)
        }
        guard case .scene(let sceneID)? = connections[connection]?.phase, let scene = scenes[sceneID],
              let waiting = pendingConnects.removeValue(forKey: scene.session)
        else { return }
        for pending in waiting where connections.isOpen(pending.connection) {
            fork(scene.session, for: pending, reason: .scenePonged)
        }
    }

    /// The session's scene is gone (closed, or silent past the deadline): the first waiting
    /// connect resumes it, any others fork from it.
    mutating func resolvePendingConnects(of session: SessionID) {
        guard let waiting = pendingConnects.removeValue(forKey: session) else { return }
        holderAsked(session)
        let elsewhere = heldElsewhere(session)
        for pending in waiting {
            guard connections.isOpen(pending.connection) else {
                abandonKeyed(ReplyRef(connection: pending.connection, id: pending.requestID))
                continue
            }
            guard sessions[session] != nil else {
                fail(pending.requestID, request: "connect", PanesError(
                    .sessionNotFound, "no session of yours has that identifier and secret", field: "session"),
                     to: pending.connection)
                connections.setPhase(.awaitingConnect, of: pending.connection)
                continue
            }
            if !scenes.isLive(session) && !claimInFlight(session) && !elsewhere {
                resume(session, for: pending)
            } else if elsewhere && !scenes.isLive(session) && pending.deadline > monotonic() {
                // Still held on another node and still time for it to let go.
                pendingConnects[session, default: []].append(pending)
            } else if elsewhere && !scenes.isLive(session) && awaitDecidingCheck(pending, for: session) {
                // Out of time, but "the holder is alive" is only what this node last heard:
                // a check made now decides (a node killed a moment ago is found gone).
                continue
            } else if elsewhere && !scenes.isLive(session) && holderLeaseLapsed(session) {
                // The check did not find the holder gone, but its lease has run out as the
                // database counts it: it serves no window, and its end is on the way.
                awaitHolderLeaseEnd(pending, for: session)
            } else {
                let reason: ForkReason = scenes.isLive(session) ? .liveHere
                    : elsewhere ? .holderAliveAtDeadline : .claimInFlight
                fork(session, for: pending, reason: reason)
            }
        }
    }

    /// A new session seeded from the original's restoration activity and userInfo. Logged with
    /// its reason and what this node knew of the original's holder (not on a resume's path).
    mutating func fork(_ original: SessionID, for pending: PendingConnect, reason: ForkReason) {
        let holder = cluster.claims[original]?.node
        logger.info("connect forked: another window holds the session", metadata: [
            "session": "\(original)", "reason": "\(reason.rawValue)", "holder": "\(holder?.rawValue ?? "-")",
            "holderLease": "\(holder.map { leaseState(of: $0).rawValue } ?? "-")",
            "checksAnswered": "\(cluster.checksAnswered)", "decidingCheck": "\(pending.decidingCheck.map(String.init) ?? "-")",
        ])
        let source = sessions[original]!
        let configuration = configurations.first { Identifier.equal($0.name, source.configuration) } ?? configurations[0]
        do throws(PanesError) {
            let (made, secret) = try makeSession(owner: source.owner, configuration: configuration, attaching: true)
            var session = made
            session.userInfo = source.userInfo
            session.restoration = source.restoration
            session.title = source.title
            session.subtitle = source.subtitle
            session.snapshot = source.snapshot
            // Stored live, as a new session is (`connectNewSession`): written once, in the
            // commit its reply waits for, not a second time quietly after it.
            session.liveSince = session.lastActiveAt
            sessions.put(session)
            persist([.putSession(session)] + newSessionClaims(session.id)
                + sessionWebhook(.sessionCreated, session, extra: ["forkedFrom": .string(original.rawValue)]))
            attach(pending.connection, requestID: pending.requestID, request: pending.request,
                   identity: pending.identity, session: session.id, secret: secret, handedOver: pending.handedOver,
                   created: true, forkedFrom: original, storedLive: true)
        } catch {
            connections.setPhase(.awaitingConnect, of: pending.connection)
            fail(pending.requestID, request: "connect", error, to: pending.connection)
        }
    }
}
