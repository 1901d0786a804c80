/// Sessions refer to documents by identifier (a window's restoration activity targets the
/// document it shows, and its switcher entry carries the document's title and a preview of
/// its text). A deleted document leaves none of that behind, in any session of any user of
/// the workspace: deleting it rewrites them in the same batch as the deletion, a restart
/// rewrites any that an older build left, and a connect finding one that a late save brought
/// back answers `document_gone`.
extension Hub {
    /// Whether the session's window shows a workspace document that does not exist (in its
    /// workspace): deleted, or never there.
    /// - Parameter records: the hub's `documents.records`.
    static func refersToMissingDocument(_ session: SceneSession, in records: [DocumentID: DocumentRecord]) -> Bool {
        guard let id = session.document else { return false }
        return records[DocumentID(id)]?.belongs(to: session.owner.workspace) != true
    }

    /// Who did something, as events name them: `{"user", "name", "scene"}`.
    func actor(_ scene: Scene) -> JSONValue {
        ["user": .string(scene.owner.user), "name": .string(scene.userName), "scene": .string(scene.id.rawValue)]
    }

    /// The store commands that remove every reference to a deleted document: the sessions of
    /// dedicated windows showing it are deleted, every other session showing it forgets it
    /// (`SceneSession.forgetDocument`). Applies them to the hub's sessions too, except the
    /// deletions, which `discard` performs once the caller has persisted the batch.
    /// - Returns: the commands, the dedicated sessions to discard, and the owners whose
    ///   switchers changed.
    mutating func forgetDeletedDocument(_ id: DocumentID, in workspace: String)
        -> (commands: [StoreCommand], dedicated: [SessionID], owners: Set<OwnerKey>) {
        var commands: [StoreCommand] = []
        var dedicated: [SessionID] = []
        var owners: Set<OwnerKey> = []
        for sessionID in sessionIDs(showing: id, in: workspace) {
            guard var session = sessions[sessionID] else { continue }
            if configurations.first(where: { Identifier.equal($0.name, session.configuration) })?.kind == .dedicated {
                dedicated.append(sessionID)
                commands.append(.deleteSession(sessionID))
                continue
            }
            session.forgetDocument()
            sessions.put(session)
            commands.append(.putSession(session))
            owners.insert(session.owner)
        }
        return (commands, dedicated, owners)
    }
}

extension SceneSession {
    /// The session as loaded, without references to documents that are not stored: a crash
    /// or an older build may have left some. Nil when there were none.
    /// - Parameter documents: the stored documents' records.
    func forgettingMissingDocument(in documents: DocumentState) -> SceneSession? {
        guard let id = document, documents.records[DocumentID(id)]?.belongs(to: owner.workspace) != true else { return nil }
        var session = self
        session.forgetDocument()
        return session
    }
}
