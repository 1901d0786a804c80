import Logging

/// Drops held for their windows (`HeldDrop`): a drop settled for a window of a cluster (by the
/// window's node, or by the dropping node for another window of its own) has its `itemsDropped`
/// written in the same commit, and forgotten once that node sent it. If the node dies between,
/// the window's client resumes its session through another node, which takes the session over
/// and reads what is held for it (after `connected`), sends it, and forgets it. A window that
/// closed or moved while the drop settled keeps it held too: its session's next attach on this
/// node reads it (`ClusterState.heldDropsToRead`), as does any takeover elsewhere. The same drop
/// can so reach a window twice (the node sent it and died before forgetting it), with the same
/// `drag`: a client applies each drag once (PROTOCOL.md, drop).
extension Hub {
    /// The command that holds `event` for `session` until it is sent, `heldDropKeptMs` at most.
    func holdDrop(_ event: JSONObject, of drag: String, for session: SessionID) -> StoreCommand {
        .coordination(.holdDrop(HeldDrop(session: session, drag: Identifier(drag), event: event,
                                         keptUntil: now() + Millis(settings.heldDropKeptMs)),
                                forgetBefore: now()))
    }

    /// The held drop was sent (or its items went back to the dropper): forgotten.
    mutating func releaseHeldDrop(_ key: HeldDrop.Key) {
        persist(.coordination(.releaseDrop(key)))
    }

    /// A session attached here that may have drops held (`ClusterState.heldDropsToRead`): they
    /// are read, and sent once the read is back (the `connect` is answered first).
    mutating func readHeldDrops(of session: SessionID) {
        effects.append(.load(.heldDrops(session, now: now())))
    }

    /// At a session's attach, after `connected`: its held drops are read if it may have some
    /// (`ClusterState.heldDropsToRead`), so a resume reads the store only then.
    mutating func readHeldDropsIfAny(of session: SessionID) {
        if !cluster.heldDropsToRead.isEmpty, cluster.heldDropsToRead.remove(session) != nil {
            readHeldDrops(of: session)
        }
    }

    mutating func heldDropsRead(_ session: SessionID, _ drops: [HeldDrop], failure: String?) {
        if let failure {
            // Kept in the store: the next node that takes the session over reads it again.
            logLimited(.error, "the drops held for a session could not be read",
                       metadata: ["session": "\(session)", "reason": "\(failure)"])
            return
        }
        // Gone again meanwhile: kept for the next node that takes the session over.
        guard let scene = scenes.live(of: session) else { return }
        for held in drops {
            logger.notice("a drop held for a window whose node went away is delivered to it",
                          metadata: ["drag": "\(held.drag)", "session": "\(session)"])
            send(.event(ServerEvent("itemsDropped", held.event)), to: scene.connection)
            releaseHeldDrop(held.key)
        }
    }
}
