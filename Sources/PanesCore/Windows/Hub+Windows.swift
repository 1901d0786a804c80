import Logging

/// Making windows: bring forward the window that shows some content, or hand out a ticket for
/// a new one (requestSceneSessionActivation); refresh a session's switcher entry.
extension Hub {
    mutating func requestActivation(_ activity: Activity, session named: SessionID?, from scene: Scene) throws(PanesError) -> JSONValue {
        var target: SceneSession?
        if let named {
            target = try ownedSession(named, by: scene)
        } else if let content = activity.targetContentIdentifier {
            target = sessionShowing(content, owner: scene.owner)
        }
        if let target, let live = scenes.live(of: target.id) {
            send(.event(ServerEvent("activate", [
                "activity": activity.json,
                "requestedBy": ServerEvent.requester(scene),
            ])), to: live.connection)
            return ["action": "activated", "session": .string(target.id.rawValue), "scene": .string(live.id.rawValue)]
        }
        if let target, let holder = holderElsewhere(target.id) {
            // Live on another node: that node brings it forward. Its scene is not known here.
            signal(.activate(target.id, activity: activity.json, requestedBy: ServerEvent.requester(scene)), to: holder)
            return ["action": "activated", "session": .string(target.id.rawValue)]
        }
        let opened = try openWindow(for: activity, reopening: target, owner: scene.owner, clientVersion: scene.clientVersion)
        var result = opened.objectValue!
        result["action"] = "open"
        return .object(result)
    }

    /// The user's session that shows `content`: a live one first (here or on another node),
    /// then the most recently active.
    func sessionShowing(_ content: String, owner: OwnerKey) -> SceneSession? {
        func rank(_ session: SceneSession) -> Int {
            scenes.isLive(session.id) || heldElsewhere(session.id) ? 1 : 0
        }
        return sessions.sessions(of: owner)
            .filter { $0.shows(content) }
            .max { (rank($0), $0.lastActiveAt) < (rank($1), $1.lastActiveAt) }
    }

    /// A ticket for a window on `reopening`, or on a new session made for the activity.
    /// Validates before it creates anything.
    /// - Parameter drag: the drag dropped on the "new window" zone that asks for it, if one does.
    mutating func openWindow(for activity: Activity, reopening: SceneSession?, owner: OwnerKey,
                             clientVersion: String, drag: String? = nil) throws(PanesError) -> JSONValue {
        let session: SceneSession
        let created: Bool
        if let reopening {
            session = reopening
            created = false
        } else {
            guard let configuration = configurations.first(where: { $0.accepts(activity.activityType) }) else {
                throw PanesError(.unsupportedActivity, "no scene configuration accepts `\(activity.activityType)`",
                                 field: "activity.activityType")
            }
            // Its secret is dropped: the ticket's connect issues the one the window gets.
            var made = try makeSession(owner: owner, configuration: configuration).session
            made.title = activity.title ?? ""
            // What the window will show, so a second "open" of the same content finds it even
            // before the new window connects.
            made.restoration = Restoration(activity: activity, metadata: RestorationMetadata(
                savedAt: now(), serverVersion: serverVersion, protocolVersion: Self.protocolVersion,
                clientVersion: clientVersion))
            sessions.put(made)
            persist([.putSession(made)] + sessionWebhook(.sessionCreated, made)
                + (drag.map { sessionWebhook(.windowSpawned, made, extra: ["drag": .string($0),
                                                                         "activityType": .string(activity.activityType)]) } ?? []))
            session = made
            created = true
        }
        // Reopening a window for what it already showed restores it whole (scroll, selection,
        // note): its stored activity is richer than the request's, so nothing is handed over.
        let restoresItself = !created && session.restoration != nil
            && (activity.targetContentIdentifier == nil
                || session.shows(activity.targetContentIdentifier))
        let ticket = Ticket(id: ids.bearerToken("tkt_"), owner: owner, session: session.id,
                            handedOver: restoresItself ? [] : [activity],
                            expiresAt: now() + Millis(settings.ticketLifetimeMs), madeSession: created)
        tickets[ticket.id] = ticket
        ticketDeadlines.push(ticket.id, at: ticket.expiresAt)
        shareTicket(ticket)
        if created { sessionsChanged(for: owner) }
        return [
            "session": .string(session.id.rawValue), "ticket": .string(ticket.id),
            "url": .string("/?workspace=\(owner.workspace)&ticket=\(ticket.id)"),
            "expiresAt": .int(ticket.expiresAt), "created": .bool(created),
        ]
    }

    /// Updates a session's switcher entry and, with `activity`, its restoration activity
    /// (requestSceneSessionRefresh). The session's live scene, when it is not the requester, is
    /// told (`sessionRefreshed`), so the window takes the refresh in instead of overwriting it
    /// with its next save.
    /// In a cluster, a session live nowhere is written as a compare-and-set on its record
    /// (`Hub+SessionRevisions.swift`), answered when the store has taken it.
    mutating func requestRefresh(_ request: RefreshRequest, from scene: Scene, context: RequestContext,
                                 attempt: Int = 0) throws(PanesError) -> JSONValue? {
        let (id, title, subtitle, snapshot, activity) = (request.session, request.title, request.subtitle,
                                                        request.snapshot, request.activity)
        var session = try ownedSession(id, by: scene)
        if let title { session.title = title }
        if let subtitle { session.subtitle = subtitle }
        if let snapshot { session.snapshot = snapshot }
        if let activity {
            session.restoration = Restoration(activity: activity, metadata: RestorationMetadata(
                savedAt: now(), serverVersion: serverVersion, protocolVersion: Self.protocolVersion,
                clientVersion: scene.clientVersion))
        }
        if let holder = holderElsewhere(id) {
            // Live on another node, which alone writes the session while its window is live:
            // that node applies the refresh and tells its window.
            var fields: JSONObject = ["requestedBy": ServerEvent.requester(scene)]
            if let title { fields["title"] = .string(title) }
            if let subtitle { fields["subtitle"] = .string(subtitle) }
            if let snapshot { fields["snapshot"] = snapshot }
            if activity != nil, let restoration = session.restoration {
                fields["activity"] = restoration.activity.json
                fields["metadata"] = restoration.metadata.json
            }
            signal(.refresh(id, fields: .object(fields)), to: holder)
            return ["session": sessionSummary(session)]
        }
        if refreshCommitsInStore(session, request, context: context, attempt: attempt) { return nil }
        store(session)
        let entry = sessionSummary(session)
        if let live = scenes.live(of: id), live.id != scene.id {
            // The activity as stored, so the window saves back exactly what it was given.
            let replaced = activity.map { _ in session.restoration?.activity.json ?? .null }
            send(.event(.sessionRefreshed(entry, activity: replaced, requestedBy: scene)), to: live.connection)
        }
        sessionsChanged(for: session.owner)
        return ["session": entry]
    }
}
