/// Presence: each scene in a document shares its selection, a display name, a colour and a
/// payload of its own (`data`, at most `maxPresenceBytes`). Selections are kept at the
/// document's current revision and moved through every operation as it is applied, so a
/// selection is always where its text went. Others hear of a scene's presence at most every
/// `presenceIntervalMs`: a change inside the interval is held, and the latest is sent when
/// it ends (a departure is never held).
extension Hub {
    /// Updates the scene's presence and tells the others; the reply is the stored selection.
    mutating func setPresence(_ id: DocumentID, _ update: PresenceUpdate, scene: Scene) throws(PanesError) -> JSONValue {
        let record = try self.record(id, for: scene)
        guard let document = documents.open[id], var participant = document.participants[scene.id] else {
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
        if let data = update.data { participant.data = data }
        participant.shared = true
        let now = monotonic()
        let interval = Millis(settings.presenceIntervalMs)
        let hold = participant.toldAt.map { now - $0 < interval } ?? false
        if hold, !participant.held {
            participant.held = true
            documents.holdPresence(PresenceKey(document: id, scene: scene.id), until: participant.toldAt! + interval)
        } else if !hold {
            participant.toldAt = now
        }
        documents.updateParticipant(scene.id, in: id) { $0 = participant }

        if !hold { tellPresence(of: participant, in: id) }
        // The list shows names and colours, not selections; compared by their bytes (`==`
        // on `JSONValue` compares strings by canonical equivalence, and a rename to other bytes
        // of an equivalent name went unannounced, the list keeping the old bytes).
        if !participant.summaryJSON.isIdentical(to: listed) { announce(.presence, id, workspace: record.workspace) }
        return ["revision": .int(document.revision), "selection": participant.selection?.json ?? .null]
    }

    /// Tells the document's other scenes (here and on other nodes) the participant's presence.
    mutating func tellPresence(of participant: DocumentParticipant, in id: DocumentID) {
        guard let document = documents.open[id] else { return }
        let presence = participant.presenceJSON(document: id, revision: document.revision)
        documents.updateParticipant(participant.scene, in: id) { $0.toldPresence = presence }
        broadcast(.event(.presence(presence)), to: document.connections(except: participant.connection))
        sharePresence(presence)
    }

    /// Sends the presences held back by `presenceIntervalMs` whose interval has ended.
    mutating func presenceTick(now: Millis) {
        for key in documents.duePresences(now: now) {
            let told = documents.updateParticipant(key.scene, in: key.document) { participant -> DocumentParticipant? in
                guard participant.held else { return nil }
                participant.held = false
                participant.toldAt = now
                return participant
            }
            guard let participant = told ?? nil else { continue }
            tellPresence(of: participant, in: key.document)
        }
    }

    /// The scene became active or stopped being so: the `people` of the documents it has open
    /// change ("Alice has this open in two windows, active in one"), and list observers hear it.
    mutating func presenceSceneStateChanged(_ scene: Scene) {
        let active = scene.state == .foregroundActive
        for id in documents.opened(by: scene.id) {
            let changed = documents.updateParticipant(scene.id, in: id) { participant -> Bool in
                guard participant.active != active else { return false }
                participant.active = active
                return true
            }
            guard changed == true else { continue }
            if let workspace = documents.records[id]?.workspace { announce(.presence, id, workspace: workspace) }
        }
    }
}

/// A scene's presence in a document, for `presenceIntervalMs`.
struct PresenceKey: Sendable {
    let document: DocumentID
    let scene: SceneID
}
