// Threading: the store thread's, inside `apply`'s transaction (see PostgresStore.swift).
import PanesCore
import PanesJSON

/// How `apply` writes each command: sent ahead in the transaction's pipeline, with what it
/// moved noted in the batch for the notice sent at commit.
extension PostgresStore {
    /// Writes commands in order; a run of operations appended to one document goes as one
    /// statement (a busy document's batch is many of them: one round trip, not one each).
    func write(_ commands: [StoreCommand], _ batch: inout Batch) throws {
        var index = commands.startIndex
        while index < commands.endIndex {
            guard case .appendOperation(let id, _, _) = commands[index] else {
                try write(commands[index], &batch)
                index += 1
                continue
            }
            var run: [(operation: StoredOperation, length: Int)] = []
            while index < commands.endIndex, case .appendOperation(id, let operation, let length) = commands[index] {
                run.append((operation, length))
                index += 1
            }
            try append(run, to: id, &batch)
        }
    }

    /// Logs operations of one document and advances it to the last, in one statement.
    private func append(_ run: [(operation: StoredOperation, length: Int)], to id: DocumentID,
                        _ batch: inout Batch) throws {
        if let failAfter = batch.failAfter, failAfter - batch.written < run.count {
            // The test hook: as many as it allows go in, then the failure.
            let allowed = max(0, failAfter - batch.written)
            if allowed > 0 { try append(Array(run.prefix(allowed)), to: id, &batch) }
            throw PostgresError(.injectedFault, "injected failure after \(failAfter) commands")
        }
        batch.written += run.count
        let operations = run.map(\.operation)
        guard let last = run.last else { return }
        // The insert fails the batch for an unknown document (`appendOperations`).
        try connection.send(WriteSQL.appendOperations, [
            .text(id.rawValue),
            .text(Self.arrayLiteral(operations.map { String($0.revision) })),
            .text(Self.arrayLiteral(operations.map { json($0.operation.json) })),
            .text(Self.arrayLiteral(operations.map(\.opId))),
            .text(Self.arrayLiteral(operations.map(\.author.scene))),
            .text(Self.arrayLiteral(operations.map(\.author.user))),
            .text(Self.arrayLiteral(operations.map(\.author.name))),
            .text(Self.arrayLiteral(operations.map { String($0.createdAt) })),
            .int(last.operation.revision), .int(Int64(last.length)), .int(last.operation.createdAt),
        ])
        batch.moved(.document(id), to: last.operation.revision)
        batch.edited[id] = (last.length, last.operation.createdAt)
    }

    private func write(_ command: StoreCommand, _ batch: inout Batch) throws {
        if batch.failAfter == batch.written {
            throw PostgresError(.injectedFault, "injected failure after \(batch.written) commands")
        }
        batch.written += 1
        if try writeDocument(command, &batch) { return }
        switch command {
        case .putSessionLiveness(let liveness):
            // Those columns alone, the revision unchanged (a node sends a counted `putSession`
            // instead, `Hub.countedRevisions`); a session not stored writes nothing.
            let cursor = batch.cursor
            cursor.unanswered += 1
            try connection.send(WriteSQL.putSessionLiveness, [
                .text(liveness.id.rawValue), .int(liveness.lastActiveAt), liveness.liveSince.map { .int($0) } ?? .null,
                .int(Int64(liveness.failedRestores)),
            ]) { rows in
                cursor.unanswered -= 1
                if rows.count > 0, let sequence = rows.optionalInt64(0, 0) { cursor.advance(to: sequence) }
            }
        case .putSession(let session):
            // Sent ahead like every write (a switcher refresh writes dozens of sessions at once);
            // its record number arrives with the next round trip.
            let cursor = batch.cursor
            cursor.unanswered += 1
            try connection.send(WriteSQL.upsertSession, [
                .text(session.id.rawValue), .text(session.owner.workspace), .text(session.owner.user),
                session.secretHash.storedText.postgres, .text(session.role.rawValue), .text(session.configuration),
                .text(session.title), session.snapshot.map(json).postgres, .text(json(.object(session.userInfo))),
                session.restoration.map { json($0.activity.json) }.postgres,
                session.restoration.map { json($0.metadata.json) }.postgres,
                .int(session.createdAt), .int(session.lastActiveAt), .int(Int64(session.failedRestores)),
                session.liveSince.map { .int($0) } ?? .null, .text(session.subtitle), .int(session.revision),
            ]) { rows in
                cursor.unanswered -= 1
                // None when the write was older than the stored copy and so dropped.
                if rows.count > 0, let sequence = rows.optionalInt64(0, 0) { cursor.advance(to: sequence) }
            }
        case .deleteSession(let id):
            try connection.send(WriteSQL.deleteSession, [.text(id.rawValue)])
            try connection.send(WriteSQL.deleteClaim, [.text(id.rawValue)])
            // Its held drops are its user's content: they go in the same transaction.
            try connection.send(WriteSQL.deleteSessionHeldDrops, [.text(id.rawValue)])
            try record("session", id.rawValue, deleted: true, &batch)
        case .coordination(let command):
            try write(command, &batch)
        case .putPreference(let domain, let keyPath, let value, let version):
            let user = try column(for: domain)
            let text = json(value)
            try connection.send(WriteSQL.putPreference,
                                 [.text(domain.workspace), .text(user), .int(version), .text(keyPath), .text(text)])
            batch.moved(.preferences(domain), to: version)
        case .removePreference(let domain, let keyPath, let version):
            let user = try column(for: domain)
            try connection.send(WriteSQL.removePreference,
                                 [.text(domain.workspace), .text(user), .int(version), .text(keyPath)])
            batch.moved(.preferences(domain), to: version)
        case .recordRequest(let record):
            try writeRecord(record, node: nil)
        case .forgetRequestRecords(let slots):
            try forgetRecords(slots)
        case .pruneRequestRecords(let before, let keepPerUser):
            try pruneRecords(before: before, keepPerUser: keepPerUser)
        case .enqueueWebhooks(let entries):
            try PostgresWebhookOutbox.insert(entries, on: connection)
        case .createDocument, .renameDocument, .appendOperation, .snapshotDocument, .deleteDocument, .saveVersion,
             .putDocumentAccess:
            preconditionFailure("`writeDocument` writes the documents' commands")
        }
    }

    /// Writes a command on a document; false for any other command.
    private func writeDocument(_ command: StoreCommand, _ batch: inout Batch) throws -> Bool {
        switch command {
        case .createDocument(let record, let text):
            try connection.send(WriteSQL.insertDocument, [
                .text(record.id.rawValue), .text(record.workspace), .text(record.title), .text(record.kind),
                .int(record.createdAt), .text(record.createdBy), .int(record.modifiedAt), .int(record.revision),
                .int(Int64(record.length)),
            ])
            try connection.send(WriteSQL.insertSnapshot, [.text(record.id.rawValue), .int(record.revision),
                                                      .bytes(Array(text.utf8))])
            try self.record("document", record.id.rawValue, deleted: false, &batch)
        case .renameDocument(let id, let title):
            try connection.send(WriteSQL.renameDocument, [.text(id.rawValue), .text(title)])
            try record("document", id.rawValue, deleted: false, &batch)
        case .appendOperation:
            preconditionFailure("`write(_ commands:)` sends appended operations to `append`, in runs")
        case .snapshotDocument(let id, let revision, let text, let keepFrom, let applied):
            try connection.send(WriteSQL.snapshotDocument, [.text(id.rawValue), .int(revision), .bytes(Array(String(text).utf8)),
                                                            .text(json(applied.json))])
            // From where this store's last prune of it stopped: what lies below is deleted, but
            // its index entries stay until a vacuum, and a scan from the start of the log stepped
            // over all of them every time (a seventh of PostgreSQL's CPU on a busy document, and
            // growing until the vacuum).
            try connection.send(WriteSQL.pruneOperations, [.text(id.rawValue), .int(prunedBelow[id] ?? 0), .int(keepFrom)])
            batch.pruned[id] = keepFrom
        case .deleteDocument(let id):
            // Its snapshot goes with it (ON DELETE CASCADE); its log has no foreign key (migration 4).
            try connection.send(WriteSQL.deleteDocument, [.text(id.rawValue)])
            try connection.send(WriteSQL.deleteOperations, [.text(id.rawValue)])
            try record("document", id.rawValue, deleted: true, &batch)
        case .saveVersion(let version, let text, let keep):
            try saveVersion(version, text: text, keepCheckpoints: keep)
        case .putDocumentAccess(let id, let access):
            if access.isEmpty {
                try connection.send(WriteSQL.deleteAccess, [.text(id.rawValue)])
            } else {
                try connection.send(WriteSQL.putAccess, [.text(id.rawValue), .int(access.version),
                                                         .text(json(access.grantsJSON)), .text(json(access.linksJSON))])
            }
            try record("document", id.rawValue, deleted: false, &batch)
        default:
            return false
        }
        return true
    }

    /// A signal as its payload carries it: inline, or stored and referenced when too large
    /// for a NOTIFY payload.
    func item(for signal: NodeSignal) throws -> ChangeNoticePayload.Item {
        let text = json(signal.json)
        if ChangeNoticePayload.fitsInline(text) { return .notice(.signal(signal)) }
        return .storedSignal(try connection.integer(WriteSQL.storeSignal, [.text(text)]) ?? 0)
    }

    /// Advances the record sequence for one record (under `recordsLock`, taken up front).
    func record(_ kind: String, _ id: String, deleted: Bool, _ batch: inout Batch) throws {
        try record(WriteSQL.recordVersion, [.text(kind), .text(id), .int(deleted ? 1 : 0)], &batch)
    }

    /// The same through a statement that writes and then advances the record sequence, ending
    /// as `WriteSQL.recordVersion` does (`RETURNING seq`).
    func record(_ sql: String, _ parameters: [PostgresValue], _ batch: inout Batch) throws {
        let cursor = batch.cursor
        cursor.unanswered += 1
        try connection.send(sql, parameters) { rows in
            cursor.unanswered -= 1
            cursor.advance(to: rows.count > 0 ? rows.optionalInt64(0, 0) : nil)
        }
    }

    /// The `user_name` column for a domain: '' is the workspace domain, so an empty user name
    /// would silently merge a user's preferences into the workspace's. Refused instead.
    func column(for domain: PreferenceDomain) throws(PostgresError) -> String {
        guard let user = domain.user else { return "" }
        guard !user.isEmpty else {
            throw PostgresError(.invalidRequest, "a user preference domain needs a user name; '' is the workspace "
                                    + "domain (\(domain))")
        }
        return user
    }

    func json(_ value: JSONValue) -> String {
        JSONCodec.encodeString(value)
    }

    /// What one `apply` has done so far: for the test hook, and the notices to send at its end.
    struct Batch {
        let failAfter: Int?
        var written = 0
        /// Each channel moved, at its newest version, in the order first moved.
        var channels: [Channel: Int64] = [:]
        var order: [Channel] = []
        /// The record sequence the batch's writes advanced, filled in as their answers arrive.
        let cursor = RecordCursor()
        /// Signals, in the order written, after the channel notices.
        var signals: [ChangeNoticePayload.Item] = []
        /// Each document whose log the batch appended to: its length and last edit after it.
        var edited: [DocumentID: (length: Int, modifiedAt: Millis)] = [:]
        /// Sessions whose claim found drops held for them (`AppliedWrites.heldDropsFound`).
        let heldDropsFound = FoundSessions()
        /// Each document whose log the batch pruned: below which (`prunedBelow`, once committed).
        var pruned: [DocumentID: Int64] = [:]

        init(failAfter: Int?) { self.failAfter = failAfter }

        mutating func moved(_ channel: Channel, to version: Int64) {
            // A drag's ending wakes nobody: the winner tells every node (`dragEnded`).
            if case .coordination(.drag) = channel { return }
            // A session record's write advances the record cursor, which is what nodes follow.
            if case .coordination(.sessionRecord) = channel { return }
            if let known = channels[channel] {
                channels[channel] = max(known, version)
            } else {
                channels[channel] = version
                order.append(channel)
            }
        }

        var notices: [ChangeNotice] {
            order.map { channel -> ChangeNotice in
                let version = channels[channel]!
                if case .document(let id) = channel, let edit = edited[id] {
                    return .documentEdited(id, revision: version, length: edit.length, modifiedAt: edit.modifiedAt)
                }
                return .channel(channel, version: version)
            } + (cursor.value.map { [.records(cursor: $0)] } ?? [])
        }
    }

    /// Whether a transaction's fence passed (nil: not answered yet), a class so that the
    /// answer of the check sent ahead can fill it in.
    final class FenceCheck {
        var passed: Bool?
    }

    /// Sessions a batch's claims found drops held for, a class so that the answers of claims
    /// sent ahead can fill it in.
    final class FoundSessions {
        var sessions: [SessionID] = []
    }

    /// A batch's record cursor, a class so that the answers of writes sent ahead can fill it in.
    final class RecordCursor {
        private(set) var value: Int64?
        /// Writes sent whose answer has not arrived yet.
        var unanswered = 0

        func advance(to sequence: Int64?) {
            value = max(value ?? 0, sequence ?? 0)
        }
    }
}
