import Logging

/// The switcher's list, and the destruction of sessions. What a scene saves in its session is
/// in its request files (`UpdateActivityRequest`, `SetUserInfoRequest`).
extension Hub {
    /// The switcher's view: every session of the user, live or not, newest first.
    func sessionList(for owner: OwnerKey) -> JSONValue {
        let list = sessions.sessions(of: owner)
            .sorted { ($0.lastActiveAt, $0.id) > ($1.lastActiveAt, $1.id) }
            .map(sessionSummary)
        // Scenes on other nodes count as much as those here.
        let appState = [scenes.appState(of: owner), appStateElsewhere(of: owner)].compactMap { $0 }.max()
        return ["sessions": .array(list), "appState": .string(appState?.rawValue ?? "notRunning")]
    }

    /// One session as the switcher shows it. Never includes the secret. A window live on
    /// another node shows as that node last told (`Hub+RemoteScenes.swift`).
    func sessionSummary(_ session: SceneSession) -> JSONValue {
        let live = scenes.live(of: session.id)
        let remote = live == nil ? sceneElsewhere(of: session) : nil
        return .object([
            "persistentIdentifier": .string(session.id.rawValue),
            "title": .string(session.title.isEmpty ? (session.restoration?.activity.title ?? "") : session.title),
            "subtitle": .string(session.subtitle),
            "snapshot": session.snapshot,
            "configuration": .string(session.configuration),
            "role": .string(session.role.rawValue),
            "state": .string(live?.state.rawValue ?? remote?.state.rawValue ?? "disconnected"),
            "scene": live.map { .string($0.id.rawValue) } ?? remote?.scene.map { .string($0.rawValue) },
            // The live window's size class and pointer, so a switcher can tell a phone-sized
            // window from a desktop one, and hears when `updateTraits` changes them.
            "traits": live.map(\.traits.json) ?? remote.flatMap { $0.traits == .null ? nil : $0.traits },
            "targetContentIdentifier": session.restoration?.activity.targetContentIdentifier.map(JSONValue.string),
            "createdAt": .int(session.createdAt),
            "lastActiveAt": .int(session.lastActiveAt),
        ])
    }

    /// What a switcher shows of a session that its own saves can change; a save that leaves it
    /// as it was tells no switcher (the last-active time alone is not worth an event).
    func switcherEntry(_ session: SceneSession) -> JSONValue {
        var entry = sessionSummary(session).objectValue ?? [:]
        entry["lastActiveAt"] = nil
        return .object(entry)
    }

    /// Tells every scene of the user that shows the switcher that the list changed.
    mutating func sessionsChanged(for owner: OwnerKey) {
        // Whatever changed the list here may have changed this node's live scenes: the other
        // nodes' switchers hear of it too.
        shareScenes(of: owner)
        let watchers = switcher.scenes(of: owner)
        guard !watchers.isEmpty else { return }
        broadcast(.event(.sessionsChanged(sessionList(for: owner))),
                  to: watchers.compactMap { scenes[$0]?.connection }.sorted())
    }

    /// Deletes a session and everything stored for it; its live scene is told to close with
    /// the animation, and the switcher watchers are told.
    /// - Parameters:
    ///   - reply: a `requestDestruction`'s answer, sent after the deletion is persisted and
    ///     before the destroyed scene hears of it, so a scene destroying its own session gets its
    ///     reply before the close.
    ///   - persisted: the caller has persisted the session's deletion already, in its own batch
    ///     (a document's deletion and the windows that go with it).
    mutating func discard(_ id: SessionID, animation: DismissalAnimation, reason: String,
                          reply: (context: RequestContext, result: JSONValue)? = nil, persisted: Bool = false) {
        guard let session = sessions.remove(id) else { return }
        tickets = tickets.filter { $0.value.session != id }
        sessionDiscarded(id)
        if !persisted {
            persist([.deleteSession(id)] + sessionWebhook(.sessionDestroyed, session, extra: ["reason": .string(reason)]))
        }
        if let reply { send(.reply(reply.context.id, result: reply.result), to: reply.context.connection) }
        logger.info("session discarded", metadata: ["session": "\(id)", "owner": "\(session.owner)", "reason": "\(reason)"])
        if let scene = scenes.live(of: id) {
            let sceneID = scene.id
            send(.event(.sessionDestroyed(id, animation: animation)), to: scene.connection)
            detach(sceneID, abnormal: false)
            close(scene.connection, .sessionDestroyed, reason: "session destroyed")
        } else {
            sessionsChanged(for: session.owner)
        }
        resolvePendingConnects(of: id)
    }
}
