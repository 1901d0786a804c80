import Logging

/// Scene lifecycle: visibility and focus move a scene through its activation states; a
/// closed connection disconnects the scene while its session stays.
extension Hub {
    mutating func reportLifecycle(visible: Bool, focused: Bool, scene sceneID: SceneID) -> JSONValue {
        var scene = self.scene(sceneID)
        let target = ActivationState.derived(visible: visible, focused: focused)
        let previous = scene.state
        for event in previous.transitions(to: target) {
            metrics.lifecycle[event.rawValue, default: 0] += 1
            logger.info("\(event.rawValue)", metadata: ["scene": "\(sceneID)", "session": "\(scene.session)"])
        }
        scene.state = target
        scenes[sceneID] = scene
        if previous != target {
            stateCounts[scene.owner]?.remove(previous)
            stateCounts[scene.owner]?.add(target)
            updateAppState(scene.owner)
            sessionsChanged(for: scene.owner)
            presenceSceneStateChanged(scene)
        }
        return ["state": .string(target.rawValue)]
    }

    /// The user's app state is the highest state of their scenes; logged when it changes.
    mutating func updateAppState(_ owner: OwnerKey) {
        let state = stateCounts[owner]?.highest
        guard appStates[owner] != state else { return }
        logger.info("app state", metadata: [
            "owner": "\(owner)", "from": "\(appStates[owner]?.rawValue ?? "notRunning")",
            "to": "\(state?.rawValue ?? "notRunning")",
        ])
        appStates[owner] = state
    }

    mutating func connectionClosed(_ connectionID: ConnectionID, abnormal: Bool) {
        guard let connection = connections.removeValue(forKey: connectionID) else { return }
        metrics.connectionsClosed += 1
        if !commits.answered.isEmpty { commits.answered = commits.answered.filter { $0.connection != connectionID } }
        if !requestKeys.isIdle {
            for ref in requestKeys.connects(from: connectionID) { abandonKeyed(ref) }
        }
        switch connection.phase {
        case .awaitingConnect:
            break
        case .answering(let session):
            pendingConnects[session]?.removeAll { $0.connection == connectionID }
            if pendingConnects[session]?.isEmpty == true { pendingConnects[session] = nil }
        case .scene(let sceneID), .closing(let sceneID?):
            detach(sceneID, abnormal: abnormal)
        case .closing(nil):
            break
        }
    }

    /// Ends a scene: its session stays, with its last-active time and the clean-start count.
    mutating func detach(_ sceneID: SceneID, abnormal: Bool) {
        guard let scene = scenes.removeValue(forKey: sceneID) else { return }
        scenesByOwner[scene.owner]?.remove(sceneID)
        if scenesByOwner[scene.owner]?.isEmpty == true { scenesByOwner[scene.owner] = nil }
        stateCounts[scene.owner]?.remove(scene.state)
        if stateCounts[scene.owner]?.isEmpty == true { stateCounts[scene.owner] = nil }
        switcher.unwatch(sceneID, of: scene.owner)
        if liveScenes[scene.session] == sceneID { liveScenes[scene.session] = nil }
        metrics.lifecycle[LifecycleEvent.didDisconnect.rawValue, default: 0] += 1
        logger.info("didDisconnect", metadata: [
            "scene": "\(sceneID)", "session": "\(scene.session)", "abnormal": "\(abnormal)",
        ])
        sceneWillEnd(scene)

        if var session = sessions[scene.session] {
            session.lastActiveAt = now()
            session.liveSince = nil
            idleDeadlines.push(session.id, at: session.lastActiveAt + Millis(settings.sessionMaxIdleMs))
            if let restoredAt = scene.restoredAt, abnormal, now() - restoredAt <= Millis(settings.cleanStartWindowMs) {
                session.failedRestores += 1
                logger.notice("scene ended abnormally soon after a restore", metadata: [
                    "session": "\(session.id)", "inARow": "\(session.failedRestores)",
                ])
            } else {
                session.failedRestores = 0
            }
            sessions[session.id] = session
            persist(.putSession(session))
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
