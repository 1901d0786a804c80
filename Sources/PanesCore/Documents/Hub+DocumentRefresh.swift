/// The switcher and the sidebar follow documents: a session showing a document keeps it in
/// its restoration activity, with the document's title and a preview of its text as the
/// session's title and snapshot (requestSceneSessionRefresh, done by the server), and list
/// observers hear of modifications, at most every `documentListIntervalMs` per document.
extension Hub {
    /// Notes that a document's text changed: list observers and the switcher entries of
    /// windows showing it hear of it, at most every `documentListIntervalMs`. Without a preview
    /// (another node's edit of a document not held here) the switcher entries stay as they are.
    mutating func markModified(_ id: DocumentID, preview: JSONValue?) {
        documents.modified(id, preview: preview, now: monotonic(), interval: Millis(settings.documentListIntervalMs))
    }

    /// Announces the modified documents whose interval has passed.
    mutating func documentsTick(now: Millis) {
        for (id, preview) in documents.dueAnnouncements(now: now) {
            guard let record = documents.records[id] else { continue }
            announce(.modified, id, workspace: record.workspace)
            // Every node following the document comes here; each writes the previews of the
            // sessions it holds (and of those nobody holds), so a session live on another node
            // is written by its holder alone, from its own copy of it.
            refreshSessions(showing: id, in: record.workspace, title: nil,
                            snapshot: preview, skippingHeldElsewhere: true)
        }
    }

    /// Makes the scene's session remember the document it opened, so "open in new window"
    /// finds this window, and a restored window reopens it.
    mutating func keepInRestoration(_ id: DocumentID, scene: Scene, preview: JSONValue) {
        guard var session = sessions[scene.session], let record = documents.records[id] else { return }
        let before = session
        if !session.shows(id) {
            // Keep the window's own kind of activity (a dedicated window's, a presenter's).
            let configuration = configurations.first { Identifier.equal($0.name, session.configuration) }
            let type = session.restoration?.activity.activityType
                ?? configuration?.activityTypes.first { $0.hasPrefix("panes.document") && !$0.hasSuffix("*") }
                ?? "panes.document"
            let metadata = RestorationMetadata(savedAt: now(), serverVersion: serverVersion,
                                               protocolVersion: Self.protocolVersion, clientVersion: scene.clientVersion)
            // The activity's userInfo is the window's own state (its note, say): it stays.
            session.restoration = Restoration(
                activity: Activity(activityType: type, title: record.title,
                                   userInfo: session.restoration?.activity.userInfo ?? [:],
                                   targetContentIdentifier: id.rawValue),
                metadata: metadata)
        }
        session.title = record.title
        session.snapshot = preview
        guard session != before else { return }
        sessions.put(session)
        persist(.putSession(session))
        sessionsChanged(for: scene.owner)
    }

    /// Updates the title and/or snapshot of every session of the workspace whose window shows
    /// the document, live or not, and tells their switchers.
    /// - Parameter skippingHeldElsewhere: leaves out the sessions another node holds (cluster).
    mutating func refreshSessions(showing id: DocumentID, in workspace: String, title: String?, snapshot: JSONValue?,
                                  skippingHeldElsewhere: Bool = false) {
        guard title != nil || snapshot != nil else { return }
        var owners: Set<OwnerKey> = []
        // A version's window shows the version, not today's text.
        for sessionID in sessionIDs(showing: id, in: workspace, versions: false) {
            if skippingHeldElsewhere, heldElsewhere(sessionID) { continue }
            guard var session = sessions[sessionID] else { continue }
            // Not into the switcher of someone the document was taken away from.
            if let record = documents.records[id], documentHidden(record, from: session.owner.user) { continue }
            let before = session
            if let title { session.title = title }
            if let snapshot { session.snapshot = snapshot }
            guard session != before else { continue }
            sessions.put(session)
            persist(.putSession(session))
            owners.insert(session.owner)
        }
        for owner in owners.sorted() { sessionsChanged(for: owner) }
    }
}
