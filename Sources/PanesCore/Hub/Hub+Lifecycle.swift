import Logging

/// Scene lifecycle: visibility and focus move a scene through its activation states; a
/// closed connection disconnects the scene while its session stays.
extension Hub {
    mutating func reportLifecycle(visible: Bool, focused: Bool, scene sceneID: SceneID) -> JSONValue {
        let target = ActivationState.derived(visible: visible, focused: focused)
        let (scene, previous) = scenes.setState(target, of: sceneID)!
        for event in previous.transitions(to: target) {
            metrics.lifecycle[event] += 1
            logger.info("\(event.rawValue)", metadata: ["scene": "\(sceneID)", "session": "\(scene.session)"])
        }
        if previous != target {
            updateAppState(scene.owner)
            sessionsChanged(for: scene.owner)
            presenceSceneStateChanged(scene)
        }
        return ["state": .string(target.rawValue)]
    }

    /// The user's app state is the highest state of their scenes; logged when it changes.
    mutating func updateAppState(_ owner: OwnerKey) {
        appStateChanged(owner, scenes.settleAppState(of: owner))
    }

    /// Logs the user's app state's change, settled by `updateAppState` or by `Scenes.attach`.
    func appStateChanged(_ owner: OwnerKey, _ change: AppStateChange?) {
        guard let change else { return }
        logger.info("app state", metadata: [
            "owner": "\(owner)", "from": "\(change.from?.rawValue ?? "notRunning")",
            "to": "\(change.to?.rawValue ?? "notRunning")",
        ])
    }

    mutating func connectionClosed(_ connectionID: ConnectionID, abnormal: Bool) {
        guard let connection = connections.remove(connectionID) else { return }
        metrics.connectionsClosed += 1
        if !commits.answered.isEmpty { commits.answered = commits.answered.filter { $0.connection != connectionID } }
        if !requestKeys.isIdle {
            for ref in requestKeys.connects(from: connectionID) { abandonKeyed(ref) }
        }
        switch connection.phase {
        case .awaitingConnect:
            break
        case .answering(let session):
            dropPendingConnect(of: connectionID, waitingOn: session)
        case .scene(let sceneID), .closing(let sceneID?):
            detach(sceneID, abnormal: abnormal)
        case .closing(nil):
            break
        }
    }

    /// Takes the connection's `connect` out of those waiting for the session's live scene to
    /// answer a probe (its socket went, or it was told to close). When it was the last, a
    /// question put to another node about the session is forgotten: its answer would find no one
    /// waiting, and the next connect asks again.
    mutating func dropPendingConnect(of connectionID: ConnectionID, waitingOn session: SessionID) {
        pendingConnects[session]?.removeAll { $0.connection == connectionID }
        if pendingConnects[session]?.isEmpty == true {
            pendingConnects[session] = nil
            holderAsked(session)
        }
    }

    /// Ends a scene: its session stays, with its last-active time and the clean-start count.
    mutating func detach(_ sceneID: SceneID, abnormal: Bool) {
        guard let scene = scenes.detach(sceneID) else { return }
        switcher.unwatch(sceneID, of: scene.owner)
        metrics.lifecycle[.didDisconnect] += 1
        logger.info("didDisconnect", metadata: [
            "scene": "\(sceneID)", "session": "\(scene.session)", "abnormal": "\(abnormal)",
        ])
        sceneWillEnd(scene)

        let now = now()
        let restoreFailed = scene.restoredAt.map { abnormal && now - $0 <= Millis(settings.cleanStartWindowMs) } ?? false
        if let session = sessions.update(scene.session, { session -> SceneSession in
            session.lastActiveAt = now
            session.liveSince = nil
            session.failedRestores = restoreFailed ? session.failedRestores + 1 : 0
            return session
        }) {
            sessions.becameIdle(session)
            if restoreFailed {
                logger.notice("scene ended abnormally soon after a restore", metadata: [
                    "session": "\(session.id)", "inARow": "\(session.failedRestores)",
                ])
            }
            // The three fields changed here alone: SQLite writes its narrow liveness row.
            persist(.putSessionLiveness(SessionLiveness(of: session)))
        }
        release(scene.session)
        updateAppState(scene.owner)
        sessionsChanged(for: scene.owner)
        resolvePendingConnects(of: scene.session)
    }

    /// Lets each feature drop what the ending scene held (observations, drags, presence), so
    /// a scene's state never outlives it.
    mutating func sceneWillEnd(_ scene: Scene) {
        preferencesSceneWillEnd(scene)
        documentsSceneWillEnd(scene)
    }
}
