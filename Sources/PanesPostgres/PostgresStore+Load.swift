// Threading: called on the store thread only, between batches.
public import PanesCore
internal import PanesJSON

extension PostgresStore {
    /// Everything stored, sessions and documents sorted by id (bytewise), read in one snapshot,
    /// with the record cursor that snapshot includes and every session claim.
    ///
    /// A stored field that cannot be read back (JSON that does not parse) is left out, as the
    /// SQLite store does: one bad value never costs a user their windows.
    public func loadState() throws -> StoredState {
        try connection.transaction(isolation: "REPEATABLE READ READ ONLY") {
            var state = StoredState()
            let sessions = try connection.query(ReadSQL.sessions)
            for row in 0..<sessions.count { state.sessions.append(session(sessions, row)) }
            let domains = try connection.query(ReadSQL.domains)
            for row in 0..<domains.count {
                state.preferences[domain(domains, row)] = StoredPreferences(version: domains.int64(row, 2))
            }
            let values = try connection.query(ReadSQL.preferences)
            for row in 0..<values.count {
                guard let value = decode(values.text(row, 3)) else { continue }
                state.preferences[domain(values, row), default: StoredPreferences()].values[values.text(row, 2) ?? ""] =
                    VersionedValue(value: value, version: values.int64(row, 4))
            }
            let documents = try connection.query(ReadSQL.documents)
            for row in 0..<documents.count { state.documents.append(record(documents, row)) }
            state.recordCursor = try connection.integer(ReadSQL.recordCursor) ?? 0
            let claims = try connection.query(ReadSQL.claims)
            for row in 0..<claims.count {
                state.claims[SessionID(claims.text(row, 0) ?? "")] =
                    SessionClaim(node: claims.text(row, 1).map(NodeID.init), epoch: claims.int64(row, 2))
            }
            let access = try connection.query(ReadSQL.access)
            for row in 0..<access.count {
                state.access[DocumentID(access.text(row, 0) ?? "")] = DocumentAccess(
                    grants: decode(access.text(row, 2)), links: decode(access.text(row, 3)), version: access.int64(row, 1))
            }
            let secret = try connection.query(ReadSQL.linkSecret)
            if secret.count > 0 { state.linkSecret = secret.bytes(0, 0) ?? [] }
            state.requestRecords = try loadRecords()
            return state
        }
    }

    /// One preference domain as stored; nil when nothing is stored for it.
    public func loadPreferences(_ domain: PreferenceDomain) throws -> StoredPreferences? {
        let user = try column(for: domain)
        return try connection.transaction(isolation: "REPEATABLE READ READ ONLY") { () -> StoredPreferences? in
            guard let version = try connection.integer(ReadSQL.domainVersion, [.text(domain.workspace), .text(user)]) else {
                return nil
            }
            var stored = StoredPreferences(version: version)
            let rows = try connection.query(ReadSQL.domainValues, [.text(domain.workspace), .text(user)])
            for row in 0..<rows.count {
                guard let value = decode(rows.text(row, 1)) else { continue }
                stored.values[rows.text(row, 0) ?? ""] = VersionedValue(value: value, version: rows.int64(row, 2))
            }
            return stored
        }
    }

    /// One document for opening: its record, snapshot, and the logged operations after the
    /// snapshot's revision `- retention`, oldest first, from one snapshot of the database.
    /// - Throws: `PostgresError`, and `PostgresError(.unexpectedResult)` when a logged operation
    ///   or the applied op ids cannot be read back: a document whose history is damaged is
    ///   refused, not opened wrong (`AppliedStreams.stored`: opened forgetting, a resent edit
    ///   is applied twice).
    public func loadDocument(_ id: DocumentID, retention: Int) throws -> StoredDocument? {
        try connection.transaction(isolation: "REPEATABLE READ READ ONLY") { () -> StoredDocument? in
            let rows = try connection.query(ReadSQL.document, [.text(id.rawValue)])
            guard rows.count > 0 else { return nil }
            let applied: AppliedStreams
            do throws(PanesError) {
                applied = try AppliedStreams.stored(rows.text(0, 11) ?? "[]")
            } catch {
                throw PostgresError(.unexpectedResult, "document \(id), applied op ids: \(error.message)")
            }
            var document = StoredDocument(record: record(rows, 0), snapshotRevision: rows.int64(0, 9),
                                          snapshotText: String(decoding: rows.bytes(0, 10) ?? [], as: UTF8.self),
                                          operations: [], applied: applied)
            document.operations = try operations(id, after: document.snapshotRevision - Int64(retention))
            return document
        }
    }

    /// A document's logged operations after `revision`, oldest first.
    func operations(_ id: DocumentID, after revision: Int64) throws -> [StoredOperation] {
        try operations(id, from: try connection.query(ReadSQL.operations, [.text(id.rawValue), .int(revision)]))
    }

    /// Queues the read of a document's operations after `revision`: `onRows` gets its rows
    /// with the transaction's next round trip (read them with `operations(_:from:)`).
    func sendOperationsRead(_ id: DocumentID, after revision: Int64, onRows: @escaping (PostgresRows) -> Void) throws {
        try connection.send(ReadSQL.operations, [.text(id.rawValue), .int(revision)], onRows: onRows)
    }

    /// The operations in rows of `ReadSQL.operations`.
    func operations(_ id: DocumentID, from rows: PostgresRows) throws -> [StoredOperation] {
        var operations: [StoredOperation] = []
        operations.reserveCapacity(rows.count)
        for row in 0..<rows.count {
            let revision = rows.int64(row, 0)
            let operation: TextOperation
            do throws(PanesError) {
                guard case .success(let json) = JSONCodec.decode(rows.text(row, 1) ?? "") else {
                    throw PanesError(.invalidOperation, "not JSON")
                }
                operation = try TextOperation(json: json)
            } catch {
                throw PostgresError(.unexpectedResult, "document \(id), operation \(revision): \(error.message)")
            }
            operations.append(StoredOperation(
                revision: revision, operation: operation, opId: rows.text(row, 2) ?? "",
                author: DocumentAuthor(scene: rows.text(row, 3) ?? "", user: rows.text(row, 4) ?? "",
                                       name: rows.text(row, 5) ?? ""),
                createdAt: rows.int64(row, 6)))
        }
        return operations
    }

    /// - Parameter revisionColumn: where the row has `revision` (after the columns above).
    func session(_ rows: PostgresRows, _ row: Int, revisionColumn: Int = 16) -> SceneSession {
        let restoration: Restoration?
        if let activity = decode(rows.text(row, 9)), let metadata = decode(rows.text(row, 10)),
           let activity = try? Activity(json: activity, field: "restoration_activity"),
           let metadata = try? RestorationMetadata(json: metadata) {
            restoration = Restoration(activity: activity, metadata: metadata)
        } else {
            restoration = nil
        }
        return SceneSession(
            id: SessionID(rows.text(row, 0) ?? ""), secretHash: SecretHash(stored: rows.text(row, 3) ?? ""),
            owner: OwnerKey(workspace: rows.text(row, 1) ?? "", user: rows.text(row, 2) ?? ""),
            role: SceneConfiguration.SessionRole(rawValue: rows.text(row, 4) ?? "") ?? .window,
            configuration: rows.text(row, 5) ?? "", title: rows.text(row, 6) ?? "", subtitle: rows.text(row, 15) ?? "",
            snapshot: decode(rows.text(row, 7)), userInfo: decode(rows.text(row, 8))?.objectValue ?? [:],
            restoration: restoration, createdAt: rows.int64(row, 11), lastActiveAt: rows.int64(row, 12),
            failedRestores: Int(truncatingIfNeeded: rows.int64(row, 13)), liveSince: rows.optionalInt64(row, 14),
            revision: rows.int64(row, revisionColumn))
    }

    /// The record in a row's first nine columns, in the order of the `documents` table.
    func record(_ rows: PostgresRows, _ row: Int) -> DocumentRecord {
        DocumentRecord(id: DocumentID(rows.text(row, 0) ?? ""), workspace: rows.text(row, 1) ?? "",
                       title: rows.text(row, 2) ?? "", kind: rows.text(row, 3) ?? "text", createdAt: rows.int64(row, 4),
                       createdBy: rows.text(row, 5) ?? "", modifiedAt: rows.int64(row, 6), revision: rows.int64(row, 7),
                       length: Int(truncatingIfNeeded: rows.int64(row, 8)))
    }

    /// The domain in a row's first two columns; user '' is the workspace domain.
    private func domain(_ rows: PostgresRows, _ row: Int) -> PreferenceDomain {
        let user = rows.text(row, 1) ?? ""
        return PreferenceDomain(workspace: rows.text(row, 0) ?? "", user: user.isEmpty ? nil : user)
    }

    /// The JSON in `text`; nil for NULL and for text that does not parse. The server wrote it,
    /// and no object it builds holds two keys equivalent only canonically (`JSONObject`); text
    /// that does anyway (a hand edit) is read with both keys rather than refused and lost.
    func decode(_ text: String?) -> JSONValue? {
        guard let text, case .success(let value) = JSONCodec.decode(text, acceptingEquivalentKeys: true) else { return nil }
        return value
    }

    enum ReadSQL {
        static let sessionColumns = """
            id, workspace, user_name, secret_hash, role, configuration, title, snapshot, user_info,
            restoration_activity, restoration_meta, created_at, last_active_at, failed_restores, live_since, subtitle,
            revision
            """
        static let sessions = "SELECT \(sessionColumns) FROM sessions ORDER BY id"
        static let domains = "SELECT workspace, user_name, version FROM preference_domains"
        static let preferences = "SELECT workspace, user_name, key_path, value, version FROM preferences"
        static let domainVersion = "SELECT version FROM preference_domains WHERE workspace = $1 AND user_name = $2"
        static let domainValues = "SELECT key_path, value, version FROM preferences WHERE workspace = $1 AND user_name = $2"
        static let documentColumns = "d.id, d.workspace, d.title, d.kind, d.created_at, d.created_by, d.modified_at, d.revision, d.length"
        static let documents = "SELECT \(documentColumns) FROM documents AS d ORDER BY d.id"
        static let recordCursor = "SELECT coalesce(max(seq), 0)::bigint FROM record_versions"
        static let claims = "SELECT session, node, epoch FROM session_claims"
        static let access = "SELECT document, version, grants, links FROM document_access"
        static let linkSecret = "SELECT value FROM deployment_secrets WHERE name = 'document-links'"
        static let document = """
            SELECT \(documentColumns), s.revision, s.text, s.applied
            FROM documents AS d JOIN document_snapshots AS s ON s.document = d.id WHERE d.id = $1
            """
        static let operations = """
            SELECT revision, operation, op_id, author_scene, author_user, author_name, created_at
            FROM document_operations WHERE document = $1 AND revision > $2 ORDER BY revision
            """
    }
}
