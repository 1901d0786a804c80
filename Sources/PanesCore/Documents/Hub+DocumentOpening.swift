import Logging

/// Opening and closing documents: loading a document that is not in memory, catching a
/// reconnecting client up, and evicting a document when its last scene leaves.
///
/// Load path: the first `openDocument` for a document that is not held emits
/// `.load(.document(id))` and waits for its load (`DocumentState.waitForLoad`); later opens of the same document
/// wait with it (one load). The runtime reads on the store thread after every batch submitted
/// before the load, and hands the result back as `HubEvent.loaded`, which answers them all.
extension Hub {
    /// Opens at once if the document is held, else waits for a load and replies then (nil).
    /// - Parameter link: a link's token, checked (`useLink`) before anything else.
    mutating func openDocument(_ id: DocumentID, revision: Int64?, pending: [String] = [], link: String? = nil,
                               requestID: RequestID, scene: Scene, mayWait: Bool = true) throws(PanesError) -> JSONValue? {
        if mayWait, openWaitsForOtherNodes(id, revision: revision, pending: pending, link: link, requestID: requestID,
                                           scene: scene) { return nil }
        if let link { try useLink(link, for: id, scene: scene) }
        let record = try self.record(id, for: scene)
        // On a node of a cluster the record of a document not held here may lag the store; the
        // load that opens it reads the store, and `join` checks the revision then.
        if let revision, revision > record.revision, !(sharesStore && documents.open[id] == nil) {
            throw PanesError(.revisionInFuture,
                             "revision \(revision) is newer than the document's \(record.revision); open it without one",
                             field: "revision")
        }
        if documents.open[id] != nil {
            return try join(id, scene: scene, revision: revision, pending: pending)
        }
        let pending = PendingOpen(scene: scene.id, requestID: requestID, revision: revision, pending: pending)
        if documents.waitForLoad(id, pending) { effects.append(.load(.document(id, retention: OpenDocument.Retention(settings).loadCount))) }
        return nil
    }

    /// Takes the scene out of the document; its presence leaves.
    mutating func closeDocument(_ id: DocumentID, scene: Scene) throws(PanesError) -> JSONValue {
        _ = try self.record(id, for: scene)
        guard documents.open[id]?.participants[scene.id] != nil else {
            throw PanesError(.documentNotOpen, "document \(id) is not open in this scene", field: "document")
        }
        leave(id, scene: scene.id)
        return [:]
    }

    /// A load finished: answers every open that waited for it.
    mutating func loaded(_ result: LoadResult) {
        switch result {
        case .preferences(let domain, let stored, let failure):
            preferencesLoaded(domain, stored, failure: failure)
        case .preferenceChanges(let domain, let changes, let failure):
            preferenceChangesLoaded(domain, changes, failure: failure)
        case .operations(let id, let operations, let failure):
            operationsLoaded(id, operations, failure: failure)
        case .recordChanges(let changes, let failure):
            recordChangesLoaded(changes, failure: failure)
        case .requestKeysReserved(let keys, let outcomes, let failure):
            requestKeysReserved(keys, outcomes, failure: failure)
        case .records(let sessions, let documents, let read, let failure):
            recordsRead(read, asked: (sessions, documents), failure: failure)
        case .requestRecords(let slots, let records, let failure):
            requestRecordsRead(slots, records, failure: failure)
        case .versions(let read, let answer, let failure):
            versionsRead(read, answer, failure: failure)
        case .heldDrops(let session, let drops, let failure):
            heldDropsRead(session, drops, failure: failure)
        case .document(let id, let stored, let failure):
            if commits.documentWriters[id]?.catchingUp == true, documents.open[id] != nil {
                documentCaughtUp(id, stored, failure: failure)
                return
            }
            // No entry: the document was deleted meanwhile, and its waiters were answered then.
            guard let waiting = documents.loadEnded(id) else { return }
            let live = waiting.filter { scenes[$0.scene] != nil }
            do throws(PanesError) {
                if let failure {
                    logLimited(.error, "document load failed", metadata: ["document": "\(id)", "error": "\(failure)"])
                    throw PanesError(.storageFailed, "the document could not be read from the store; retry")
                }
                guard let stored, let record = documents.records[id] else {
                    logger.error("document missing from the store", metadata: ["document": "\(id)"])
                    throw PanesError(.internalError, "document \(id) is missing from the store")
                }
                guard !live.isEmpty else { return }  // everyone waiting has gone: hold nothing
                // Opens wait only for documents that are not held; should one be held anyway,
                // it is newer than what the store read, so it stays.
                if documents.open[id] == nil { try hold(stored, record: record) }
            } catch {
                for pending in live {
                    fail(pending.requestID, request: pending.purpose.request, error, to: scenes[pending.scene]!.connection)
                }
                return
            }
            for pending in live {
                let scene = scenes[pending.scene]!
                switch pending.purpose {
                case .open: break
                case .read:
                    if let stored { answerRead(pending, stored, connection: scene.connection) }
                    continue
                case .edit(let edit):
                    enqueue(DocumentChannel.self, edit, on: id)
                    continue
                }
                do throws(PanesError) {
                    let result = try join(id, scene: scene, revision: pending.revision, pending: pending.pending)
                    send(.reply(pending.requestID, result: result), to: scene.connection)
                } catch {
                    fail(pending.requestID, request: "openDocument", error, to: scene.connection)
                }
            }
            if !commits.documentWriters.isBusy(id) { _ = catchUpIfBehind(DocumentChannel.self, id) }
            evictIfUnused(id)
        }
    }

    /// Holds a document read from the store, its record made to follow the store's text.
    private mutating func hold(_ stored: StoredDocument, record: DocumentRecord) throws(PanesError) {
        let id = record.id
        let document = try OpenDocument(stored)
        if sharesStore, record.revision > document.revision {
            // Another node committed while this read was on its way (its notice
            // moved the record): read the rest once the document is held.
            commits.documentWriters.markBehind(id, at: record.revision)
        } else if document.revision != record.revision || document.length != record.length {
            // The store is the authority on the text; the record follows it. In a
            // cluster a record behind the log is expected: the read overtook the
            // notice of another node's commit, which is still on its way.
            let expected = sharesStore && record.revision < document.revision
            logger.log(level: expected ? .debug : .warning, "document record disagreed with its log", metadata: [
                "document": "\(id)", "record": "\(record.revision)", "log": "\(document.revision)",
            ])
            documents.updateRecord(id) { record in
                record.revision = document.revision
                record.length = document.length
            }
        }
        documents.hold(document)
        logger.debug("document loaded", metadata: ["document": "\(id)", "revision": "\(document.revision)"])
    }

    /// Adds the scene to a loaded document and builds the `openDocument` result. Re-opening a
    /// document the scene has open answers again and keeps its presence.
    ///
    /// A catch-up by snapshot says which of `pending` (the client's unacknowledged op ids) the
    /// kept log holds (`applied`): the client then rebases only the others over the difference.
    mutating func join(_ id: DocumentID, scene: Scene, revision: Int64?, pending: [String] = []) throws(PanesError) -> JSONValue {
        guard let document = documents.open[id] else {
            throw PanesError(.internalError, "document \(id) is not loaded")
        }
        // Checked again here: access may have changed while the document loaded.
        guard let record = documents.records[id], let role = role(scene, for: record) else {
            throw PanesError(.documentNotFound, "no document \(id) in this workspace", field: "document")
        }
        var result: JSONObject = ["revision": .int(document.revision), "role": .string(role.rawValue)]
        switch revision {
        case nil:
            result["text"] = .string(String(document.text))
        case let base? where base > document.revision:
            throw PanesError(.revisionInFuture,
                             "revision \(base) is newer than the document's \(document.revision); open it without one",
                             field: "revision")
        case let base? where base == document.revision:
            result["catchUp"] = "none"
            result["operations"] = []
        case let base? where base >= document.oldestBase
            && document.revision - base <= Int64(settings.maxCatchUpOperations):
            result["catchUp"] = "operations"
            result["operations"] = .array(document.operations(after: base).map(\.json))
        case _?:
            result["catchUp"] = "snapshot"
            result["text"] = .string(String(document.text))
            if !pending.isEmpty { result["applied"] = .array(document.appliedOpIds(pending).map { .string($0) }) }
        }
        let joining = document.participants[scene.id] == nil
        if joining {
            documents.join(id, DocumentParticipant(
                scene: scene.id, connection: scene.connection, user: scene.owner.user, name: scene.userName,
                active: scene.state == .foregroundActive, joined: document.joins))
        }
        rights.tell(scene.id, id, role)
        result["presence"] = .array(document.orderedParticipants.filter { $0.scene != scene.id && $0.shared }
            .map { $0.presenceJSON(document: id, revision: document.revision) } + presenceElsewhere(in: id))
        result["document"] = documents.summary(id, limit: settings.maxListedParticipants)
        keepInRestoration(id, scene: scene, preview: document.preview)
        if joining { announce(.presence, id, workspace: scene.owner.workspace) }
        return .object(result)
    }

    /// Takes the scene out of the document: others hear that its presence left, list
    /// observers hear who is in it now, and the document is evicted if nobody is left.
    mutating func leave(_ id: DocumentID, scene sceneID: SceneID) {
        let participant = documents.leave(id, scene: sceneID)
        rights.closed(id, by: sceneID)
        guard let participant, let document = documents.open[id] else { return }
        if participant.shared {
            let others = document.participants.values.map(\.connection).sorted()
            let left = participant.presenceJSON(document: id, revision: document.revision, left: true)
            broadcast(.event(.presence(left)), to: others)
            sharePresence(left)
        }
        if document.participants.isEmpty { evict(id) }
        if let workspace = documents.records[id]?.workspace { announce(.presence, id, workspace: workspace) }
    }

    /// Evicts the document if no scene has it open: the last one may have left while a commit
    /// or a catch-up kept it.
    mutating func evictIfUnused(_ id: DocumentID) {
        if documents.open[id]?.participants.isEmpty == true { evict(id) }
    }

    /// Drops the document's text and log from memory. Its stored state is complete already:
    /// every change was persisted when it was applied.
    mutating func evict(_ id: DocumentID) {
        // A commit in flight applies to the document when it comes back; it goes after that.
        guard commits.documentWriters[id] == nil else { return }
        // What was edited here since the last checkpoint is kept before the text goes.
        takeCheckpoint(id)
        guard documents.evict(id) else { return }
        logger.debug("document unloaded", metadata: ["document": "\(id)"])
    }
}
