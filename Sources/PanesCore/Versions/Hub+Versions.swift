import Logging

/// Versions of documents: named versions saved by a person, listed, read, compared and
/// restored. Automatic checkpoints are `Hub+VersionCheckpoints.swift`.
///
/// Every request but `saveVersion`'s write is a read of the store (`VersionRead`, on the store
/// thread, with the diff it needs), answered when the read comes back: versions are never held
/// in memory, and on a cluster every node reads the same ones from the shared store.
///
/// Access: as for documents, a version of another workspace's document is `document_not_found`.
/// Viewers may list, read and compare; saving and restoring needs `editor` or `owner`.
/// Restoring is an edit by the restoring scene: the operation from today's text to the
/// version's, committed through the document's ordinary batch (`Hub+DocumentEditing.swift`),
/// sent to every other window as a `documentOperation`, and to the restoring one in its reply.
extension Hub {
    /// `saveVersion`: the document's text now, under `name`. Needs the document open in the
    /// scene (its text is the one this node holds).
    mutating func saveVersion(_ id: DocumentID, name: String, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let scene = self.scene(context.scene)
        let document = try openForVersions(id, scene, to: "save versions")
        let version = VersionRecord(id: ids.token("ver_"), document: id, kind: .named, revision: document.revision,
                                    name: name, createdAt: now(), createdBy: scene.owner.user, length: document.length)
        readVersions(id, .countNamed, for: context, SaveVersionRequest.type, .save(version, text: document.text))
        return nil
    }

    /// `listVersions`, `readVersion`, `compareVersions`: a read of the store, answered when it
    /// comes back.
    mutating func readVersions(_ id: DocumentID, _ query: VersionRead.Query, _ context: RequestContext,
                               request: String) throws(PanesError) -> JSONValue? {
        _ = try record(id, for: scene(context.scene))
        let purpose: VersionWaiter.Purpose = switch query {
        case .list: .list
        case .compare: .compare
        default: .read
        }
        readVersions(id, query, for: context, request, purpose)
        return nil
    }

    /// `restoreVersion`: reads the version and the operation to it from the document's text
    /// here, then queues that operation as the scene's edit.
    mutating func restoreVersion(_ id: DocumentID, version: String, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let scene = self.scene(context.scene)
        let document = try openForVersions(id, scene, to: "restore versions")
        readVersions(id, .restore(version: version, current: document.text, revision: document.revision),
                     for: context, RestoreVersionRequest.type, .restore)
        return nil
    }

    /// The document as this node holds it, for a scene that may change it and has it open: a
    /// version is saved from, and restored onto, the text the scene sees.
    private func openForVersions(_ id: DocumentID, _ scene: Scene, to action: String) throws(PanesError) -> OpenDocument {
        let record = try record(id, for: scene)
        // The scene's role for this document (rights per document), not only the workspace's.
        try requireRole(.editor, scene, record, to: action)
        guard let document = documents.open[id], document.participants[scene.id] != nil else {
            throw PanesError(.documentNotOpen, "open document \(id) in this scene to \(action)", field: "document")
        }
        return document
    }

    private mutating func readVersions(_ id: DocumentID, _ query: VersionRead.Query, for context: RequestContext,
                                       _ request: String, _ purpose: VersionWaiter.Purpose) {
        let ticket = versions.makeTicket()
        versions.waiting[ticket] = VersionWaiter(context: context, request: request, purpose: purpose)
        effects.append(.load(.versions(VersionRead(ticket: ticket, document: id, query: query))))
    }

    /// A version read came back: answers the request that waited for it.
    mutating func versionsRead(_ read: VersionRead, _ answer: VersionRead.Answer?, failure: String?) {
        guard let waiter = versions.waiting.removeValue(forKey: read.ticket) else { return }
        // The scene went meanwhile: nobody to answer.
        guard let scene = scenes[waiter.context.scene], scene.connection == waiter.context.connection else { return }
        let id = read.document
        do throws(PanesError) {
            // Deleted meanwhile (perhaps on another node): its versions went with it.
            _ = try record(id, for: scene)
            guard let answer else {
                logLimited(.error, "version read failed", metadata: ["document": "\(id)", "error": "\(failure ?? "")"])
                throw PanesError(.storageFailed, "the document's versions could not be read from the store; retry",
                                 retryAfterMs: 1_000)
            }
            guard let result = try versionAnswered(id, answer, waiter, scene: scene) else { return }
            send(.reply(waiter.context.id, result: result), to: scene.connection)
        } catch {
            fail(waiter.context.id, request: waiter.request, error, to: scene.connection)
        }
    }

    /// The reply to a version request whose read came back; nil when the reply comes later
    /// (a restore's, after its commit).
    private mutating func versionAnswered(_ id: DocumentID, _ answer: VersionRead.Answer, _ waiter: VersionWaiter,
                                          scene: Scene) throws(PanesError) -> JSONValue? {
        switch (answer, waiter.purpose) {
        case (.notFound(let version, let field), _):
            throw PanesError(.versionNotFound, "document \(id) has no version `\(version)`", field: field)
        case (.list(let records), _):
            return ["document": .string(id.rawValue), "versions": .array(records.map(\.json))]
        case (.text(let record, let text), _):
            return ["version": record.json, "text": .string(text)]
        case (.compare(let from, let to, let operation), _):
            return ["from": from.json, "to": to.json, "operation": operation.json]
        case (.countNamed(let count), .save(let version, let text)):
            guard count < settings.maxNamedVersionsPerDocument else {
                throw PanesError(.tooMany, "document \(id) already has \(count) named versions "
                                     + "(setting `maxNamedVersionsPerDocument`); they go with the document")
            }
            persist(.saveVersion(version, text: text, keepCheckpoints: settings.maxCheckpointsPerDocument))
            logger.info("version saved", metadata: ["document": "\(id)", "version": "\(version.id)",
                                                   "revision": "\(version.revision)", "by": "\(version.createdBy)"])
            return ["version": version.json]
        case (.restore(let version, let operation, let revision, let newest), _):
            try queueRestore(id, version, operation, revision: revision, newest: newest, waiter, scene: scene)
            return nil
        default:
            throw PanesError(.internalError, "a version read answered something else than was asked")
        }
    }

    /// Queues the operation from the document's text at `revision` to the version's as the
    /// scene's edit; its reply follows the commit. A version equal to today's text changes
    /// nothing and is answered at once.
    private mutating func queueRestore(_ id: DocumentID, _ version: VersionRecord, _ operation: TextOperation,
                                       revision: Int64, newest: Int64?, _ waiter: VersionWaiter,
                                       scene: Scene) throws(PanesError) {
        guard let document = documents.open[id], let participant = document.participants[scene.id] else {
            throw PanesError(.documentNotOpen, "document \(id) was closed before its version could be restored",
                             field: "document")
        }
        guard !operation.isNoop else {
            send(.reply(waiter.context.id, result: ["revision": .int(document.revision), "version": version.json,
                                                    "unchanged": true]), to: scene.connection)
            return
        }
        // Today's text is kept first, unless a version of it is kept already, so a restore never
        // leaves it only in the operation log. (Whichever node made the edits since.)
        takeCheckpoint(id, force: newest.map { $0 < document.revision } ?? true, by: scene.owner.user)
        let author = DocumentAuthor(scene: scene.id.rawValue, user: scene.owner.user, name: participant.name)
        // One op-id stream per restoring scene (`AppliedStreams`), counting up on this node.
        var edit = DocumentEdit(context: waiter.context, revision: revision, operation: operation,
                                opId: "restore.\(scene.id.rawValue):\(versions.makeTicket())", author: author,
                                standing: editStanding(scene, id))
        edit.restoring = version
        logger.info("version restored", metadata: ["document": "\(id)", "version": "\(version.id)",
                                                  "by": "\(scene.owner.user)"])
        enqueue(DocumentChannel.self, edit, on: id)
    }
}
