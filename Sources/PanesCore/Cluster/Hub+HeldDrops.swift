import Logging

/// Drops held for their windows (`HeldDrop`): a drop settled for a window of a cluster (by the
/// window's node, or by the dropping node for another window of its own) has its `itemsDropped`
/// written in the same commit, and forgotten once that node sent it. If the node dies between,
/// the window's client resumes its session through another node, which takes the session over
/// and reads what is held for it (after `connected`), sends it, and forgets it. A window that
/// closed or moved while the drop settled keeps it held too, until its session next attaches.
/// Every attach in a cluster claims the session first, and the claim's own write says whether
/// drops are held for it (`heldDropsFound`): the attach reads them then, on a takeover as on a
/// resume of a session another node let go, and a resume with nothing held reads nothing
/// (`ClusterState.heldDropsToRead` carries that to the attach, and keeps a session whose read
/// failed or came back to no window for its next attach here).
/// Rows nobody read are deleted once `heldDropKeptMs` has passed, every
/// `heldDropPruneIntervalMs` by each node (`pruneHeldDrops`). The same drop
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
        if !cluster.heldDropsToRead.isEmpty, cluster.heldDropsToRead.remove(session) {
            readHeldDrops(of: session)
        }
    }

    /// Marks the session so its next attach here reads its held drops; past `maxHeldDropMarks`
    /// the oldest mark is forgotten (its rows stay until `heldDropKeptMs`, and a claim of the
    /// session, here or elsewhere, finds them again).
    mutating func markHeldDrops(of session: SessionID) {
        let forgotten = cluster.heldDropsToRead.insert(session, limit: settings.maxHeldDropMarks)
        guard forgotten > 0 else { return }
        metrics.heldDropMarksForgotten += forgotten
        logLimited(.warning, "sessions marked to read their held drops passed maxHeldDropMarks; the oldest was forgotten",
                   metadata: ["marks": "\(cluster.heldDropsToRead.count)"])
    }

    /// The claims of a transaction found drops held for these sessions (the claim's statement
    /// says so, `AppliedWrites.heldDropsFound`): marked before the claims' outcomes are
    /// handled, so the attach each claim was for reads them after `connected`.
    mutating func heldDropsFound(_ sessions: [SessionID]) {
        for session in sessions where self.sessions[session] != nil { markHeldDrops(of: session) }
    }

    mutating func heldDropsRead(_ session: SessionID, _ drops: [HeldDrop], failure: String?) {
        if let failure {
            // Kept in the store, and the session stays marked: read again while its window stays
            // open here, else at its next attach here.
            logLimited(.error, "the drops held for a session could not be read",
                       metadata: ["session": "\(session)", "reason": "\(failure)"])
            if sessions[session] != nil { markHeldDrops(of: session) }
            retryHeldDropRead(of: session)
            return
        }
        cluster.heldDropReadFailures[session] = nil
        // Gone again meanwhile: kept for its next attach, here (marked) or through a claim elsewhere.
        guard let scene = scenes.live(of: session) else {
            if !drops.isEmpty, sessions[session] != nil { markHeldDrops(of: session) }
            return
        }
        for held in drops {
            logger.notice("a drop held for a window whose node went away is delivered to it",
                          metadata: ["drag": "\(held.drag)", "session": "\(session)"])
            send(.event(ServerEvent("itemsDropped", held.event)), to: scene.connection)
            releaseHeldDrop(held.key)
        }
    }

    /// A failed read of a session's held drops, whose window is open here: read again after the
    /// shared store's backoff for this many failures in a row, up to `heldDropReadRetries` reads;
    /// then (or once the window is gone) only its next attach reads them, as it is marked.
    mutating func retryHeldDropRead(of session: SessionID) {
        let failures = (cluster.heldDropReadFailures[session] ?? 0) + 1
        guard scenes.live(of: session) != nil, failures <= settings.heldDropReadRetries else {
            cluster.heldDropReadFailures[session] = nil
            return
        }
        cluster.heldDropReadFailures[session] = failures
        cluster.heldDropRetries.push(session, at: monotonic() + Backoff.sharedStore.pause(afterFailures: failures))
    }

    /// The reads `retryHeldDropRead` put off that are due: made again for a window still open
    /// here whose session is still marked (an attach meanwhile read them already).
    mutating func retryHeldDropReads(now clock: Millis) {
        for (_, session) in cluster.heldDropRetries.popDue(now: clock) {
            guard scenes.live(of: session) != nil, cluster.heldDropsToRead.remove(session) else {
                cluster.heldDropReadFailures[session] = nil
                continue
            }
            readHeldDrops(of: session)
        }
    }

    /// Every `heldDropPruneIntervalMs`, held drops whose keeping ended are deleted: a row is
    /// otherwise deleted only when sent, with its session, or by the next drop held.
    mutating func pruneHeldDrops(now clock: Millis) {
        // Set when the hub is made for a node of a cluster.
        guard let due = cluster.heldDropPruneAt, due <= clock else { return }
        cluster.heldDropPruneAt = clock + Millis(settings.heldDropPruneIntervalMs)
        effects.append(.persistQuietly([.coordination(.pruneHeldDrops(before: now()))]))
    }
}
