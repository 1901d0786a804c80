import Logging

/// Editing: the server orders every change. An operation made on an older revision is
/// transformed past everything accepted since, committed, and only then applied, acknowledged
/// and sent to every other scene that has the document open.
///
/// Each document is a channel (`CommitState`): one commit in flight, and the edits that arrive
/// meanwhile go together in the next one, so a busy document costs one commit per batch, not
/// per keystroke.
extension Hub {
    /// Checks what can be checked now and queues the edit; the reply follows its commit.
    mutating func edit(_ id: DocumentID, revision: Int64, operation: TextOperation, opId: String,
                       _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let scene = self.scene(context.scene)
        let record = try record(id, for: scene)
        try requireRole(.editor, scene, record, to: "edit it (it is read-only for you)")
        let name: String
        if let participant = documents.open[id]?.participants[scene.id] {
            name = participant.name
        } else if Self.isServiceConnection(context.connection) {
            // The HTTP API edits as a named actor without opening the document (`Hub+API.swift`).
            name = scene.userName
        } else {
            throw PanesError(.documentNotOpen, "open document \(id) before editing it", field: "document")
        }
        let author = DocumentAuthor(scene: scene.id.rawValue, user: scene.owner.user, name: name)
        let edit = DocumentEdit(context: context, revision: revision, operation: operation, opId: opId, author: author,
                                standing: editStanding(scene, id))
        guard documents.open[id] != nil else {
            loadForService(id, PendingOpen(scene: scene.id, requestID: context.id, revision: nil, purpose: .edit(edit)))
            return nil
        }
        enqueue(DocumentChannel.self, edit, on: id)
        return nil
    }

    /// If the document has no commit in flight, rebases and applies every waiting edit to a
    /// copy of the document and commits them as one.
    mutating func startDocumentBatch(_ id: DocumentID) {
        guard let taken = takeBatch(DocumentChannel.self, id) else { return }
        var edits = taken.items
        guard let document = documents.open[id] else {
            // Deleted (or never loaded) while the edits waited.
            dropBatch(DocumentChannel.self, id)
            for edit in edits {
                fail(edit.context.id, request: edit.requestType,
                     PanesError(.documentNotFound, "no document \(id) in this workspace", field: "document"),
                     to: edit.context.connection)
            }
            return
        }
        var working = document
        var outcomes: [DocumentBatch.Outcome] = []
        var commands: [StoreCommand] = []
        let record = documents.records[id]
        for index in edits.indices {
            let edit = edits[index]
            // Its sender's rights as they are now, not as when it was queued.
            if let record, let refused = refusal(of: edit, record) {
                outcomes.append(.failed(refused))
                continue
            }
            // A resend after a reconnect: the first one was applied, so this one is not. A real
            // resend is always based on a revision before the original's, because a client that
            // has seen that revision has seen its operation applied; an id reused at or after it
            // (a reloaded tab counting from 1 again) is a new operation.
            if let original = working.appliedRevision(of: edit.opId, after: edit.revision) {
                outcomes.append(.duplicate(revision: original))
                continue
            }
            do throws(PanesError) {
                // Past what is committed (kept with the edit for a retry), then past this batch's
                // earlier edits.
                let start = edit.rebaseStart
                let committed = try document.rebase(start.operation, from: start.revision)
                edits[index].rebased = (document.revision, committed)
                let rebased = try working.rebase(committed, from: document.revision)
                guard rebased.targetLength <= settings.maxDocumentScalars else {
                    throw PanesError(.tooLarge, "the document would be \(rebased.targetLength) Unicode scalars, over the "
                                         + "limit of \(settings.maxDocumentScalars) (setting `maxDocumentScalars`)",
                                     field: "operation")
                }
                let entry = try working.apply(rebased, opId: edit.opId, author: edit.author, at: now())
                commands.append(.appendOperation(id, entry, length: working.length))
                outcomes.append(.applied(entry))
            } catch {
                outcomes.append(.failed(error))
            }
        }
        if let snapshot = working.compact(since: document.revision, snapshotEvery: settings.snapshotEvery,
                                          snapshotEveryBytes: settings.snapshotEveryBytes,
                                          retention: OpenDocument.Retention(settings), now: now()) {
            commands.append(snapshot)
        }
        if !webhookEndpoints.isEmpty, let record,
           case .applied(let first)? = outcomes.first(where: { if case .applied = $0 { true } else { false } }),
           case .applied(let last)? = outcomes.last(where: { if case .applied = $0 { true } else { false } }) {
            // One event for the batch, in its commit: it is written only if the commit is.
            commands += documentWebhook(.documentChanged, record, revisions: first.revision...last.revision,
                                        by: (last.author.user, last.author.name),
                                        extra: ["revision": .int(last.revision), "length": .int(Int64(working.length))])
        }
        let batch = DocumentBatch(edits: edits, outcomes: outcomes, working: working)
        guard !commands.isEmpty else {
            dropBatch(DocumentChannel.self, id)
            answer(batch, in: id)
            return
        }
        commitBatch(DocumentChannel.self, id, writer: taken.writer, channel: .document(id), base: document.revision,
                    commands: commands, pending: .document(id, batch))
    }

    /// The outcome of a document commit: applies and answers, or requeues after a conflict.
    mutating func documentCommitted(_ id: DocumentID, _ batch: DocumentBatch, _ outcome: CommitOutcome) {
        commits.documentWriters.commitEnded(id)
        metrics.countDocumentCommit(outcome, operations: batch.appliedCount)
        switch outcome {
        case .committed:
            let preview = documents.updateOpen(id) { document in
                document.adoptText(of: batch.working)
                for case .applied(let entry) in batch.outcomes {
                    document.moveSelections(through: entry.operation, authorScene: SceneID(entry.author.scene))
                }
                return document.preview
            }
            if let preview {
                let moved = documents.updateRecord(id) { record in
                    record.revision = batch.working.revision
                    record.length = batch.working.length
                    if case .applied(let last)? = batch.outcomes.last(where: { if case .applied = $0 { true } else { false } }) {
                        record.modifiedAt = last.createdAt
                    }
                }
                if moved != nil { markModified(id, preview: preview) }
                if case .applied(let last)? = batch.outcomes.last(where: { if case .applied = $0 { true } else { false } }) {
                    countTowardsCheckpoint(id, operations: batch.appliedCount, lastUser: last.author.user)
                }
            }
            answer(batch, in: id)
        case .conflict:
            retryAfterConflict(DocumentChannel.self, batch.edits, on: id)
            return
        case .behind(let operations):
            // Another node committed first, and the store answered with what it committed: it
            // is applied here (and sent to this node's scenes) as a catch-up read would, and
            // the edits go again at once, rebased on it. A hot document edited from several
            // nodes conflicts often; this keeps each conflict to the one round trip.
            commits.documentWriters.requeue(batch.edits, on: id)
            _ = applyCommitted(operations, to: id)
            retryOpens(document: id)
            guard let last = operations.last?.revision, documents.open[id]?.revision == last else {
                // Not what this node can take (the document went meanwhile, or they do not
                // follow on from it): the ordinary conflict path reads and decides.
                catchUp(DocumentChannel.self, id, afterConflict: true)
                return
            }
        case .recorded:
            // Edits carry no request keys (their `opId` is theirs): a store that says so is wrong.
            logger.critical("a document commit was refused for a request key it does not carry",
                            metadata: ["document": "\(id)"])
            retryAfterConflict(DocumentChannel.self, batch.edits, on: id)
            return
        case .unknown:
            // Answered early (`commitOutcomeUnknown`); the real outcome comes later.
            return
        case .failed(let reason):
            logLimited(.error, "document commit failed", metadata: ["document": "\(id)", "reason": "\(reason)"])
            let error = PanesError(.storageFailed, "the edit could not be stored; nothing was changed, retry",
                                   retryAfterMs: 1_000)
            for (edit, result) in zip(batch.edits, batch.outcomes) {
                if case .failed(let own) = result {
                    fail(edit.context.id, request: edit.requestType, own, to: edit.context.connection)
                } else {
                    fail(edit.context.id, request: edit.requestType, error, to: edit.context.connection)
                }
            }
        }
        nextBatch(DocumentChannel.self, id)
    }

    /// Replies to each edit, and sends each applied operation to the document's other scenes.
    mutating func answer(_ batch: DocumentBatch, in id: DocumentID) {
        for (edit, outcome) in zip(batch.edits, batch.outcomes) {
            switch outcome {
            case .failed(let error):
                fail(edit.context.id, request: edit.requestType, error, to: edit.context.connection)
            case .duplicate(let revision):
                send(.reply(edit.context.id, result: ["revision": .int(revision), "opId": .string(edit.opId),
                                                      "duplicate": true]), to: edit.context.connection)
            case .applied(let entry):
                var result: JSONValue = ["revision": .int(entry.revision), "opId": .string(edit.opId)]
                if let version = edit.restoring {
                    result = ["revision": .int(entry.revision), "opId": .string(edit.opId), "version": version.json,
                              "operation": entry.operation.json, "author": entry.author.json]
                }
                send(.reply(edit.context.id, result: result), to: edit.context.connection)
                if let document = documents.open[id] {
                    // The author is the edit's own scene, told by the reply.
                    let others = document.connections(except: edit.context.connection)
                    broadcast(.event(.documentOperation(id, entry)), to: others)
                }
            }
        }
    }
}
