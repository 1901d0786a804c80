import Logging

/// What a scene saves in its session (restoration activity, userInfo), the switcher's list,
/// and the destruction of sessions.
extension Hub {
    mutating func updateActivity(_ activity: Activity?, scene sceneID: SceneID) -> JSONValue {
        let scene = self.scene(sceneID)
        var session = sessions[scene.session]!
        let metadata = RestorationMetadata(savedAt: now(), serverVersion: serverVersion,
                                           protocolVersion: Self.protocolVersion, clientVersion: scene.clientVersion)
        session.restoration = activity.map { Restoration(activity: $0, metadata: metadata) }
        session.lastActiveAt = now()
        let titleChanged = session.restoration?.activity.title != sessions[scene.session]!.restoration?.activity.title
        sessions[session.id] = session
        persist(.putSession(session))
        if titleChanged { sessionsChanged(for: scene.owner) }
        return .object(["savedAt": .int(now()), "metadata": activity == nil ? nil : metadata.json])
    }

    mutating func setUserInfo(_ userInfo: [String: JSONValue], merge: Bool, scene sceneID: SceneID) throws(PanesError) -> JSONValue {
        let scene = self.scene(sceneID)
        var session = sessions[scene.session]!
        var updated = merge ? session.userInfo : [:]
        for (key, value) in userInfo {
            // In a merge, null removes the key; in a replace, null is kept as a value.
            if merge, value == .null { updated[key] = nil } else { updated[key] = value }
        }
        let size = JSONValue.object(updated).encodedSize
        guard size <= settings.maxUserInfoBytes else {
            throw .tooLarge("userInfo", size: size, limit: settings.maxUserInfoBytes, setting: "maxUserInfoBytes")
        }
        session.userInfo = updated
        session.lastActiveAt = now()
        sessions[session.id] = session
        persist(.putSession(session))
        return ["userInfo": .object(updated)]
    }

    mutating func listSessions(watch: Bool, scene sceneID: SceneID) -> JSONValue {
        let owner = scene(sceneID).owner
        if watch {
            switcherWatchers[owner, default: []].insert(sceneID)
        } else {
            switcherWatchers[owner]?.remove(sceneID)
        }
        return sessionList(for: owner)
    }

    /// The switcher's view: every session of the user, live or not, newest first.
    func sessionList(for owner: OwnerKey) -> JSONValue {
        let list = (sessionsByOwner[owner] ?? []).compactMap { sessions[$0] }
            .sorted { ($0.lastActiveAt, $0.id) > ($1.lastActiveAt, $1.id) }
            .map(sessionSummary)
        return ["sessions": .array(list), "appState": .string(appStates[owner]?.rawValue ?? "notRunning")]
    }

    /// One session as the switcher shows it. Never includes the secret.
    func sessionSummary(_ session: SceneSession) -> JSONValue {
        let live = liveScenes[session.id].flatMap { scenes[$0] }
        return .object([
            "persistentIdentifier": .string(session.id.rawValue),
            "title": .string(session.title.isEmpty ? (session.restoration?.activity.title ?? "") : session.title),
            "snapshot": session.snapshot,
            "configuration": .string(session.configuration),
            "role": .string(session.role.rawValue),
            "state": .string(live?.state.rawValue ?? "disconnected"),
            "scene": live.map { .string($0.id.rawValue) },
            "targetContentIdentifier": session.restoration?.activity.targetContentIdentifier.map(JSONValue.string),
            "createdAt": .int(session.createdAt),
            "lastActiveAt": .int(session.lastActiveAt),
        ])
    }

    /// Tells every scene of the user that shows the switcher that the list changed.
    mutating func sessionsChanged(for owner: OwnerKey) {
        guard let watchers = switcherWatchers[owner], !watchers.isEmpty else { return }
        broadcast(.event(.sessionsChanged(sessionList(for: owner))),
                  to: watchers.compactMap { scenes[$0]?.connection }.sorted())
    }

    mutating func requestDestruction(_ id: SessionID, animation: DismissalAnimation, scene sceneID: SceneID) throws(PanesError) -> JSONValue? {
        let scene = self.scene(sceneID)
        let session = try ownedSession(id, by: scene)
        // Reply before the destroyed scene's own close, so a scene destroying itself sees both in order.
        let requestReply: JSONValue = ["session": .string(session.id.rawValue), "animation": .string(animation.rawValue)]
        discard(session.id, animation: animation, reason: "destroyed by request")
        return requestReply
    }

    /// Deletes a session and everything stored for it; its live scene is told to close with
    /// the animation, and the switcher watchers are told.
    mutating func discard(_ id: SessionID, animation: DismissalAnimation, reason: String) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        sessionsByOwner[session.owner]?.remove(id)
        if sessionsByOwner[session.owner]?.isEmpty == true { sessionsByOwner[session.owner] = nil }
        tickets = tickets.filter { $0.value.session != id }
        persist(.deleteSession(id))
        logger.info("session discarded", metadata: ["session": "\(id)", "owner": "\(session.owner)", "reason": "\(reason)"])
        if let sceneID = liveScenes[id], let scene = scenes[sceneID] {
            send(.event(.sessionDestroyed(id, animation: animation)), to: scene.connection)
            detach(sceneID, abnormal: false)
            close(scene.connection, .sessionDestroyed, reason: "session destroyed")
        } else {
            sessionsChanged(for: session.owner)
        }
        resolvePendingConnects(of: id)
    }
}
