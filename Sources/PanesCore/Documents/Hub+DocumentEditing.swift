/// Editing: the server orders every change. An operation made on an older revision is
/// transformed past everything accepted since, applied, logged, made durable, acknowledged,
/// and sent to every other scene that has the document open.
extension Hub {
    /// Applies a client's operation made on `revision`; the reply is the revision it became.
    mutating func edit(_ id: DocumentID, revision: Int64, operation: TextOperation, opId: String,
                       scene: Scene) throws(PanesError) -> JSONValue {
        var record = try self.record(id, for: scene)
        try requireEditor(scene, to: "edit documents")
        guard var document = documents.open[id], let participant = document.participants[scene.id] else {
            throw PanesError(.documentNotOpen, "open document \(id) before editing it", field: "document")
        }
        // A resend after a reconnect: the first one was applied, so this one is not. A real
        // resend is always based on a revision before the original's, because a client that has
        // seen that revision has seen its operation applied; an id reused at or after it (a
        // reloaded tab counting from 1 again) is a new operation. The reply still waits for
        // durability: the runtime holds it behind the original's persist.
        if let original = document.appliedRevision(of: opId, after: revision) {
            return ["revision": .int(original), "opId": .string(opId), "duplicate": true]
        }
        let rebased = try document.rebase(operation, from: revision)
        guard rebased.targetLength <= settings.maxDocumentScalars else {
            throw PanesError(.tooLarge, "the document would be \(rebased.targetLength) Unicode scalars, over the limit "
                                 + "of \(settings.maxDocumentScalars) (setting `maxDocumentScalars`)", field: "operation")
        }
        let author = DocumentAuthor(scene: scene.id.rawValue, user: scene.owner.user, name: participant.name)
        let entry = try document.apply(rebased, opId: opId, author: author, authorScene: scene.id, at: now())
        var commands: [StoreCommand] = [.appendOperation(id, entry, length: document.length)]
        if let snapshot = document.compact(snapshotEvery: settings.snapshotEvery,
                                           snapshotEveryBytes: settings.snapshotEveryBytes,
                                           retention: settings.operationLogRetention) {
            commands.append(snapshot)
        }
        documents.open[id] = document
        record.revision = document.revision
        record.length = document.length
        record.modifiedAt = entry.createdAt
        documents.records[id] = record
        documents.modified.insert(id)
        documents.previews[id] = document.preview

        // Persist first: the broadcast and the reply are held until it is durable.
        effects.append(.persist(commands))
        let others = document.participants.values.filter { $0.scene != scene.id }.map(\.connection).sorted()
        broadcast(.event(.documentOperation(id, entry)), to: others)
        return ["revision": .int(entry.revision), "opId": .string(opId)]
    }
}
