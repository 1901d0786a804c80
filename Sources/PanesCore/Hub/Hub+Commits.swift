import Logging

/// Outcomes of channel commits, routed to the feature that made them. See `Commit` for why
/// the hub applies a channel write only after its commit.
extension Hub {
    mutating func committed(_ id: CommitID, _ outcome: CommitOutcome) {
        if case .unknown(let reason) = outcome {
            commitOutcomeUnknown(id, reason)
            return
        }
        guard let pending = commits.pending.removeValue(forKey: id) else {
            logger.error("outcome for an unknown commit", metadata: ["commit": "\(id)"])
            return
        }
        if commits.unresolved.remove(id) != nil {
            // Its requests were answered `outcome_unknown`: what the store found out now is
            // applied as any outcome would be; their replies are not sent again (`send`), but a
            // keyed one records them, and the retries waiting on it get them.
            let committed = outcome == .committed
            metrics.commitsUnknown[committed ? "committed" : "failed", default: 0] += 1
            logger.notice("the outcome of a commit answered `outcome_unknown` is known",
                          metadata: ["commit": "\(id)", "committed": "\(committed)"])
            // A claim whose connect was answered already: nobody is live on the session.
            if settleLateClaim(pending, committed: committed) { return }
        }
        switch pending {
        case .preferences(let domain, let writes, let outcomes):
            preferencesCommitted(domain, writes, outcomes, outcome)
        case .document(let document, let batch):
            documentCommitted(document, batch, outcome)
        case .claim(let session, let claim, let pending):
            claimCommitted(session, claim, pending, outcome)
        case .dragEnd(let drag, let ending):
            dragEndCommitted(drag, ending, outcome)
        case .dragExpiry(let drag):
            expiryCommitted(drag, outcome)
        case .dropReturn(let drop):
            dropReturnCommitted(drop, outcome)
        case .dropSettle(let drag):
            dropSettleCommitted(drag, outcome)
        case .dropRecovery(let drag):
            dropRecoveryCommitted(drag, outcome)
        case .refresh(let session, let retry):
            refreshCommitted(session, retry, outcome)
        case .keyedWrite(let slot, let commands):
            keyedWriteCommitted(slot, commands, outcome)
        }
    }

    /// The connections owed an answer by a write whose commit is in flight, or that waits for
    /// its channel's next commit, or by a drop waiting for the node of the window it named: a
    /// drain closes them once those answers are out (`closeAnswered`), not before (an answer
    /// after the close would never reach them). A commit already answered `outcome_unknown`
    /// owes nothing more: its scene need not be held open until the store learns its outcome.
    func connectionsAwaitingCommits() -> Set<ConnectionID> {
        var owed: Set<ConnectionID> = []
        for (id, pending) in commits.pending where !commits.unresolved.contains(id) {
            switch pending {
            case .preferences(_, let writes, _): for write in writes { owed.insert(write.context.connection) }
            case .document(_, let batch): for edit in batch.edits { owed.insert(edit.context.connection) }
            case .dragEnd(_, let ending): owed.insert(ending.context.connection)
            // A drop taken back (on a drain too: `takeBackRemoteDrops`) is answered to its dropper.
            case .dropReturn(let drop): owed.insert(drop.context.connection)
            case .refresh(_, let retry): owed.insert(retry.context.connection)
            case .claim, .dragExpiry, .dropSettle, .dropRecovery, .keyedWrite: break
            }
        }
        for drop in cluster.remoteDrops.values { owed.insert(drop.context.connection) }
        for write in commits.preferenceWriters.waiting { owed.insert(write.context.connection) }
        for edit in commits.documentWriters.waiting { owed.insert(edit.context.connection) }
        return owed
    }

    /// Commits waiting for their outcome, for `/metrics` and the drain.
    public var commitsInFlight: Int { commits.pending.count }

    /// The store cannot tell yet whether a commit's transaction committed, and the bound
    /// (`commitOutcomeTimeoutMs`) has passed: its requests are answered `outcome_unknown` now,
    /// each but those whose own answer does not depend on the commit (a refused write, one
    /// that changed nothing). The commit stays pending, its channel busy, until the store
    /// reports what became of it (`committed`).
    mutating func commitOutcomeUnknown(_ id: CommitID, _ reason: String) {
        guard let pending = commits.pending[id], commits.unresolved.insert(id).inserted else { return }
        metrics.commitsUnknown["unknown", default: 0] += 1
        logger.error("a commit's outcome is unknown; its writes are answered outcome_unknown",
                     metadata: ["commit": "\(id)", "reason": "\(reason)"])
        let error = Self.outcomeUnknown(reason)
        func answered(_ context: RequestContext) {
            commits.answered.insert(ReplyRef(connection: context.connection, id: context.id))
        }
        /// `outcome_unknown` to a request whose real outcome this commit brings later.
        func unknown(_ context: RequestContext, _ request: String) {
            commits.outcomeLater.insert(ReplyRef(connection: context.connection, id: context.id))
            fail(context.id, request: request, error, to: context.connection)
        }
        switch pending {
        case .preferences(_, let writes, let outcomes):
            for (write, outcome) in zip(writes, outcomes) {
                switch outcome {
                case .failed(let own): fail(write.context.id, request: write.type, own, to: write.context.connection)
                case .unchanged(let version):
                    send(.reply(write.context.id, result: ["version": .int(version), "changed": false]),
                         to: write.context.connection)
                case .changed: unknown(write.context, write.type)
                }
                answered(write.context)
            }
        case .document(_, let batch):
            for (edit, outcome) in zip(batch.edits, batch.outcomes) {
                switch outcome {
                case .failed(let own): fail(edit.context.id, request: edit.requestType, own, to: edit.context.connection)
                case .duplicate(let revision):
                    send(.reply(edit.context.id, result: ["revision": .int(revision), "opId": .string(edit.opId),
                                                          "duplicate": true]), to: edit.context.connection)
                case .applied: unknown(edit.context, edit.requestType)
                }
                answered(edit.context)
            }
        case .claim(let session, let claim, let connect?):
            // The connect is answered now and does not attach later: its client tries again.
            commits.pending[id] = .claim(session, claim, nil)
            if connections.isOpen(connect.connection) {
                connections.setPhase(.awaitingConnect, of: connect.connection)
                fail(connect.requestID, request: ConnectRequest.type, error, to: connect.connection)
            }
            abandonKeyed(ReplyRef(connection: connect.connection, id: connect.requestID))
        case .claim(_, _, nil), .dragExpiry, .keyedWrite, .dropSettle, .dropRecovery:
            break
        case .dropReturn(let drop):
            unknown(drop.context, DropRequest.type)
            answered(drop.context)
        case .dragEnd(_, let ending):
            unknown(ending.context, ending.kind.request)
            answered(ending.context)
        case .refresh(_, let retry):
            unknown(retry.context, RefreshRequest.type)
            answered(retry.context)
        }
    }

    /// A document read after a conflict: applies what other nodes committed since this node's
    /// revision, as if their edits had arrived here, then lets the waiting edits go.
    mutating func documentCaughtUp(_ id: DocumentID, _ stored: StoredDocument?, failure: String?) {
        let afterConflict = endCatchUp(DocumentChannel.self, id)
        guard failure == nil, let stored, let document = documents.open[id] else {
            let error = failure == nil
                ? PanesError(.documentNotFound, "no document \(id) in this workspace", field: "document")
                : PanesError(.storageFailed, "the document could not be read from the store; retry", retryAfterMs: 1_000)
            failWaiting(DocumentChannel.self, id, error)
            return
        }
        guard stored.record.revision > document.revision || !afterConflict else {
            // A conflict with nothing newer in the store: retrying would only conflict again.
            logger.critical("document commit conflicted but the store holds nothing newer",
                            metadata: ["document": "\(id)", "stored": "\(stored.record.revision)"])
            failStuck(DocumentChannel.self, id)
            return
        }
        _ = applyCommitted(stored.operations, to: id)
        if let held = documents.open[id], held.revision < stored.record.revision {
            // The kept log no longer reaches back to this node's revision (it fell further
            // behind than `operationLogRetention`): without a reset it would conflict, read,
            // apply nothing and retry for ever.
            resetDocument(id, to: stored)
        }
        nextBatch(DocumentChannel.self, id)
    }

    /// Takes the stored document in place of the one held, which is too far behind to catch
    /// up operation by operation. Its scenes here hold text at the old revision that no
    /// operation sent from now on would fit, so they are closed with 4008 ("reconnect and
    /// catch up"): they come back and re-open from their revision, with a snapshot if need be.
    mutating func resetDocument(_ id: DocumentID, to stored: StoredDocument) {
        guard let held = documents.open[id], let fresh = try? OpenDocument(stored) else { return }
        logger.warning("document fell behind the kept log; reloaded and its scenes told to reconnect",
                       metadata: ["document": "\(id)", "held": "\(held.revision)", "stored": "\(stored.record.revision)"])
        var reset = fresh
        reset.joins = held.joins
        documents.hold(reset)
        documents.recordFollowsText(id)
        for participant in held.orderedParticipants {
            guard let scene = scenes[participant.scene] else { continue }
            close(scene.connection, .slowConsumer, reason: "this node fell behind the document; reconnect and catch up")
            detach(scene.id, abnormal: false)
        }
    }

    /// Applies operations another node committed (those after the revision held, as long as
    /// they follow on), sending each to the document's scenes here.
    /// - Returns: how many were applied.
    mutating func applyCommitted(_ operations: [StoredOperation], to id: DocumentID) -> Int {
        var sent: [(StoredOperation, [ConnectionID])] = []
        var misfit: Int64?
        let followed = documents.updateOpen(id) { document -> (revision: Int64, length: Int, preview: JSONValue) in
            for entry in operations where entry.revision > document.revision {
                guard entry.revision == document.revision + 1 else { break }
                do throws(PanesError) {
                    _ = try document.apply(entry.operation, opId: entry.opId, author: entry.author, at: entry.createdAt)
                } catch {
                    misfit = entry.revision
                    break
                }
                document.moveSelections(through: entry.operation, authorScene: SceneID(entry.author.scene))
                sent.append((entry, document.participants.values.map(\.connection).sorted()))
            }
            return (document.revision, document.length, sent.isEmpty ? .null : document.preview)
        }
        guard let followed else { return 0 }
        if let misfit {
            logger.error("a committed operation does not fit the document held here",
                         metadata: ["document": "\(id)", "revision": "\(misfit)"])
        }
        for (entry, connections) in sent { broadcast(.event(.documentOperation(id, entry)), to: connections) }
        metrics.documentOperationsFollowed += sent.count
        guard !sent.isEmpty else { return 0 }
        let moved = documents.updateRecord(id) { record in
            record.revision = followed.revision
            record.length = followed.length
            if let last = operations.last(where: { $0.revision == followed.revision }) {
                record.modifiedAt = max(record.modifiedAt, last.createdAt)
            }
        }
        if moved != nil { markModified(id, preview: followed.preview) }
        return sent.count
    }
}
