import Logging

/// Workspace documents: the list and its observers, and creating,
/// renaming and deleting documents. Opening, editing and presence have their own files.
///
/// Access: a scene sees only the documents of its own workspace; any other id reads as
/// `document_not_found`, whether or not it exists elsewhere. Viewers may list, open and share
/// presence; changing anything needs `editor` or `owner`.
extension Hub {
    /// Whether a document with this id exists in the workspace: for drops of document items
    /// between users, who may share only what both can see.
    /// - Parameter users: who must all be able to see it (no grant of `none`).
    public func documentIsVisible(_ id: String, inWorkspace workspace: String, to users: [String] = []) -> Bool {
        guard let record = documents.records[DocumentID(id)], record.belongs(to: workspace) else { return false }
        return users.allSatisfy { !documentHidden(record, from: $0) }
    }

    /// Documents stored, held in memory, and being loaded: for `/metrics`, and to check that
    /// a document nobody has open is not held.
    public var documentCounts: (stored: Int, loaded: Int, loading: Int) {
        documents.counts
    }

    // MARK: Access

    /// The document's record, if the scene's workspace has it and the scene may see it
    /// (`Hub+DocumentRights.swift`); anything else is reported as not found, so ids of other
    /// workspaces and documents taken away from the user reveal nothing.
    func record(_ id: DocumentID, for scene: Scene) throws(PanesError) -> DocumentRecord {
        guard let record = documents.records[id], record.belongs(to: scene.owner.workspace),
              role(scene, for: record) != nil else {
            throw PanesError(.documentNotFound, "no document \(id) in this workspace", field: "document")
        }
        return record
    }

    /// Refuses viewers.
    func requireEditor(_ scene: Scene, to action: String) throws(PanesError) {
        guard scene.role >= .editor else {
            throw PanesError(.forbidden, "a \(scene.role.rawValue) may not \(action) in workspace "
                                 + "`\(scene.owner.workspace)`; it needs the role editor or owner")
        }
    }

    // MARK: The list

    /// The workspace's documents; the scene hears of every change from now on.
    mutating func observeDocuments(_ scene: Scene) -> JSONValue {
        documents.observe(scene.id, in: scene.owner.workspace)
        let list = documents.records(in: scene.owner.workspace)
            .filter { role(scene, for: $0) != nil }
            .sorted { ($0.title.lowercased(), $0.id) < ($1.title.lowercased(), $1.id) }
            .map { documents.summary($0.id, limit: settings.maxListedParticipants) }
        return ["documents": .array(list)]
    }

    /// Tells the workspace's list observers about a change. `summary` defaults to the
    /// document's current one (a deleted document's is passed in).
    /// - Parameters:
    ///   - by: who made the change (`actor`), for a deletion;
    ///   - record: a deleted document's record, for who may hear of it.
    mutating func announce(_ change: ServerEvent.DocumentChange, _ id: DocumentID, workspace: String,
                           summary: JSONValue? = nil, by: JSONValue? = nil, record: DocumentRecord? = nil) {
        // Who is in it changed here: the other nodes' summaries count it too.
        if change == .presence { sharePeople(of: id) }
        // Only those who may see it (for a deleted document, whose record is gone: who could).
        guard let record = record ?? documents.records[id] else { return }
        let watchers = documents.observers(in: workspace).compactMap { scenes[$0] }
            .filter { role($0, for: record) != nil }
            .map(\.connection).sorted()
        guard !watchers.isEmpty else { return }
        let current = summary ?? documents.summary(id, limit: settings.maxListedParticipants)
        broadcast(.event(.documentsChanged(change, current, by: by)), to: watchers)
    }

    // MARK: Create, rename, delete

    /// A new document with `text` as revision 0.
    mutating func createDocument(title: String, text: String, scene: Scene) throws(PanesError) -> JSONValue {
        try requireEditor(scene, to: "create documents")
        let workspace = scene.owner.workspace
        let count = documents.count(in: workspace)
        guard count < settings.maxDocumentsPerWorkspace else {
            throw PanesError(.tooMany, "workspace `\(workspace)` already has \(count) documents "
                                 + "(setting `maxDocumentsPerWorkspace`); delete some")
        }
        let record = DocumentRecord(id: DocumentID(ids.token("doc_")), workspace: workspace, title: title,
                                    createdAt: now(), createdBy: scene.owner.user, modifiedAt: now(),
                                    length: text.unicodeScalars.count)
        documents.insert(record)
        persist([.createDocument(record, text: text)]
            + documentWebhook(.documentCreated, record, by: (scene.owner.user, scene.userName),
                              extra: ["revision": .int(record.revision), "length": .int(Int64(record.length))]))
        logger.info("document created", metadata: ["document": "\(record.id)", "workspace": "\(workspace)",
                                                   "by": "\(scene.owner.user)"])
        announce(.created, record.id, workspace: workspace)
        return ["document": documents.summary(record.id, limit: settings.maxListedParticipants)]
    }

    /// A new title; the switcher entries of windows showing the document follow it.
    mutating func renameDocument(_ id: DocumentID, title: String, scene: Scene) throws(PanesError) -> JSONValue {
        var record = try self.record(id, for: scene)
        try requireRole(.editor, scene, record, to: "rename it")
        guard record.title != title else { return ["document": documents.summary(id, limit: settings.maxListedParticipants)] }
        let previous = record.title
        record.title = title
        documents.updateRecord(id) { $0.title = title }
        persist([.renameDocument(id, title: title)]
            + documentWebhook(.documentRenamed, record, by: (scene.owner.user, scene.userName),
                              extra: ["previousTitle": .string(previous)]))
        announce(.renamed, id, workspace: record.workspace)
        refreshSessions(showing: id, in: record.workspace, title: title, snapshot: nil)
        return ["document": documents.summary(id, limit: settings.maxListedParticipants)]
    }

    /// Deletes the document and its log, and every reference to it: scenes that have it open
    /// are told; dedicated windows showing it are destroyed with `decline`; every other session
    /// showing it forgets it (`forgetDeletedDocument`), in the same batch as the deletion, and
    /// their switchers are told; opens still waiting for it fail.
    mutating func deleteDocument(_ id: DocumentID, scene: Scene) throws(PanesError) -> JSONValue {
        let record = try self.record(id, for: scene)
        try requireRole(.editor, scene, record, to: "delete it")
        let removed = takeOut(id, record)

        // Whoever shows it: scenes that have it open, and live scenes whose window is about it.
        let showing = sessionIDs(showing: id, in: record.workspace)
        var told = Set(removed.holders)
        for session in showing { if let live = scenes.liveID(of: session) { told.insert(live) } }
        // One batch, so no crash can leave a session pointing at the document, or holding its
        // title and text, after the document itself is gone.
        let references = forgetDeletedDocument(id, in: record.workspace)
        let destroyed = references.dedicated.compactMap { sessions[$0] }.flatMap {
            sessionWebhook(.sessionDestroyed, $0, extra: ["reason": .string("its document \(id) was deleted")])
        }
        persist([.deleteDocument(id)] + references.commands
            + documentWebhook(.documentDeleted, record, by: (scene.owner.user, scene.userName)) + destroyed)
        logger.info("document deleted", metadata: ["document": "\(id)", "by": "\(scene.owner.user)",
                                                   "sessions": "\(references.commands.count)"])

        let by = actor(scene)
        let connections = told.compactMap { scenes[$0]?.connection }.sorted()
        broadcast(.event(.documentDeleted(id, by: by)), to: connections)
        failWaiting(on: removed)
        announce(.deleted, id, workspace: record.workspace, summary: removed.summary, by: by, record: record)
        rights.remove(id)

        for session in references.dedicated {
            discard(session, animation: .decline, reason: "its document \(id) was deleted", persisted: true)
        }
        for owner in references.owners.sorted() { sessionsChanged(for: owner) }
        return ["document": .string(id.rawValue)]
    }

    /// A deleted document taken out of memory, and what waited on it.
    struct RemovedDocument {
        let id: DocumentID
        /// Scenes that had it open.
        let holders: [SceneID]
        let opens: [PendingOpen]
        let edits: [DocumentEdit]
        /// Its list entry as it was, for the `deleted` announcement.
        let summary: JSONValue
    }

    /// Takes a deleted document (here or on another node) out of memory, with the opens and
    /// edits that waited on it; `failWaiting` answers those once the deletion may be told.
    mutating func takeOut(_ id: DocumentID, _ record: DocumentRecord) -> RemovedDocument {
        let holders = documents.open[id].map { Array($0.participants.keys) } ?? []
        // Edits waiting for the document's next commit fail; one in flight is answered when
        // its commit comes back (it was made before the deletion).
        let edits = commits.documentWriters[id]?.waiting ?? []
        commits.documentWriters[id]?.waiting = []
        if commits.documentWriters[id]?.isIdle == true { commits.documentWriters[id] = nil }
        let summary = record.json(participants: [])
        // The load stays in flight; with no entry here, its result is dropped when it comes.
        let opens = documents.remove(id)
        versions.progress[id] = nil  // its versions go with it
        documentRemoved(id)
        return RemovedDocument(id: id, holders: holders, opens: opens, edits: edits, summary: summary)
    }

    mutating func failWaiting(on removed: RemovedDocument) {
        let gone = PanesError(.documentNotFound, "document \(removed.id) was deleted", field: "document")
        for edit in removed.edits { fail(edit.context.id, request: edit.requestType, gone, to: edit.context.connection) }
        for pending in removed.opens {
            guard let waiter = scenes[pending.scene] else { continue }
            fail(pending.requestID, request: "openDocument", gone, to: waiter.connection)
        }
    }

    /// Sessions of the workspace whose restoration activity shows the document (or one of its
    /// versions, with `versions`), in a stable order.
    func sessionIDs(showing id: DocumentID, in workspace: String, versions: Bool = true) -> [SessionID] {
        sessions.ids(inWorkspace: workspace)
            .filter {
                guard let activity = sessions[$0]?.restoration?.activity else { return false }
                // Compared by bytes, like every identifier (`Identifier`).
                if activity.showsVersion { return versions && activity.document.map { Identifier.equal($0, id.rawValue) } == true }
                return sessions[$0]?.shows(id) == true
            }
            .sorted()
    }

    // MARK: Hooks

    /// The scene's observations, open documents and waiting opens end with it.
    mutating func documentsSceneWillEnd(_ scene: Scene) {
        documents.unobserve(scene.id, in: scene.owner.workspace)
        for id in documents.opened(by: scene.id) { leave(id, scene: scene.id) }
        rights.sceneEnded(scene.id)
        documents.stopWaiting(scene.id)
    }
}
