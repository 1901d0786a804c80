/// Presence: each scene in a document shares its selection, a display name and a colour.
/// Selections are kept at the document's current revision and moved through every operation
/// as it is applied, so a selection is always where its text went.
extension Hub {
    /// Updates the scene's presence and tells the others; the reply is the stored selection.
    mutating func setPresence(_ id: DocumentID, _ update: PresenceUpdate, scene: Scene) throws(PanesError) -> JSONValue {
        let record = try self.record(id, for: scene)
        guard var document = documents.open[id], var participant = document.participants[scene.id] else {
            throw PanesError(.documentNotOpen, "open document \(id) before sharing presence in it", field: "document")
        }
        let base = update.revision ?? document.revision
        try document.checkBase(base)
        if let selection = update.selection {
            participant.selection = selection.map { selection in
                // Made on `base`: bring it to the current revision the way the operations moved text.
                var moved = selection.clamped(toLength: document.length(at: base))
                for entry in document.operations(after: base) {
                    moved = moved.transformed(by: entry.operation, isOwnEdit: SceneID(entry.author.scene) == scene.id)
                }
                return moved
            }
        }
        let listed = participant.summaryJSON
        if let name = update.name { participant.name = name }
        if let color = update.color { participant.color = color }
        participant.shared = true
        document.participants[scene.id] = participant
        documents.open[id] = document

        let others = document.connections(except: scene.connection)
        let presence = participant.presenceJSON(document: id, revision: document.revision)
        broadcast(.event(.presence(presence)), to: others)
        sharePresence(presence)
        // The list shows names and colours, not selections.
        if participant.summaryJSON != listed { announce(.presence, id, workspace: record.workspace) }
        return ["revision": .int(document.revision), "selection": participant.selection?.json ?? .null]
    }
}
