public import PanesCore
internal import PanesJSON

extension SQLiteStore {
    /// A stored field that could not be read back. Its record was kept without it (a session
    /// without its restoration activity rather than no session), so one bad value never costs
    /// a user their windows.
    public struct LoadIssue: Sendable, Equatable, CustomStringConvertible {
        /// `session <id>` or `preference <domain> <key path>`.
        public var record: String
        /// The column that was skipped or replaced by its default.
        public var field: String
        public var problem: String

        public var description: String { "\(record): \(field): \(problem)" }
    }

    /// Everything stored, sessions sorted by id.
    public func loadState() throws -> StoredState {
        try loadStateReportingIssues().state
    }

    /// Everything stored, and every field that could not be read and was left out; for
    /// `panes inspect` and for a warning at start.
    public func loadStateReportingIssues() throws -> (state: StoredState, issues: [LoadIssue]) {
        var issues: [LoadIssue] = []
        var state = StoredState()
        // One read transaction, so sessions and preferences come from the same commit even
        // when an inspector reads next to a running server.
        try connection.run("BEGIN")
        defer { try? connection.run("COMMIT") }
        try connection.forEachRow(SQL.sessions) { row in
            state.sessions.append(session(from: row, issues: &issues))
        }
        try connection.forEachRow(SQL.domains) { row in
            let domain = PreferenceDomain(row: row)
            state.preferences[domain] = StoredPreferences(version: row.int64(at: 2))
        }
        try connection.forEachRow(SQL.preferences) { row in
            let domain = PreferenceDomain(row: row)
            let keyPath = row.text(at: 2) ?? ""
            let record = "preference \(domain) \(keyPath)"
            guard let value = decode(row.text(at: 3), record: record, field: "value", issues: &issues) else { return }
            state.preferences[domain, default: StoredPreferences()].values[keyPath] =
                VersionedValue(value: value, version: row.int64(at: 4))
        }
        try connection.forEachRow(SQL.documents) { row in
            state.documents.append(DocumentRecord(row: row))
        }
        try connection.forEachRow(SQL.access) { row in
            let grants = decode(row.text(at: 2), record: "document \(row.text(at: 0) ?? "")", field: "grants", issues: &issues)
            let links = decode(row.text(at: 3), record: "document \(row.text(at: 0) ?? "")", field: "links", issues: &issues)
            state.access[DocumentID(row.text(at: 0) ?? "")] = DocumentAccess(grants: grants, links: links,
                                                                             version: row.int64(at: 1))
        }
        try connection.forEachRow(SQL.linkSecret) { row in state.linkSecret = row.blob(at: 0) ?? [] }
        state.requestRecords = try loadRecords()
        return (state, issues)
    }

    /// One preference domain as stored; nil when nothing is stored for it.
    public func loadPreferences(_ domain: PreferenceDomain) throws -> StoredPreferences? {
        let user = domain.user ?? ""
        try connection.run("BEGIN")
        defer { try? connection.run("COMMIT") }
        guard let version = try connection.integer(SQL.domainVersion, [.text(domain.workspace), .text(user)]) else {
            return nil
        }
        var stored = StoredPreferences(version: version)
        var issues: [LoadIssue] = []
        try connection.forEachRow(SQL.domainValues, [.text(domain.workspace), .text(user)]) { row in
            let keyPath = row.text(at: 0) ?? ""
            guard let value = decode(row.text(at: 1), record: "preference \(domain) \(keyPath)", field: "value",
                                     issues: &issues) else { return }
            stored.values[keyPath] = VersionedValue(value: value, version: row.int64(at: 2))
        }
        return stored
    }

    private func session(from row: SQLiteStatement, issues: inout [LoadIssue]) -> SceneSession {
        let id = row.text(at: 0) ?? ""
        let record = "session \(id)"
        let roleText = row.text(at: 4) ?? ""
        let role = SceneConfiguration.SessionRole(rawValue: roleText) ?? {
            issues.append(LoadIssue(record: record, field: "role", problem: "unknown role `\(roleText)`, read as window"))
            return .window
        }()
        var userInfo: JSONObject = [:]
        if let value = decode(row.text(at: 8), record: record, field: "user_info", issues: &issues) {
            if let object = value.objectValue {
                userInfo = object
            } else {
                issues.append(LoadIssue(record: record, field: "user_info", problem: "is \(value.typeName), not an object"))
            }
        }
        let createdAt = row.int64(at: 11)
        var liveness = (lastActiveAt: row.int64(at: 12), liveSince: row.isNull(at: 14) ? nil : row.int64(at: 14),
                        failedRestores: Int(truncatingIfNeeded: row.int64(at: 13)))
        if row.int64(at: 16) != 0 {
            // No liveness row (only a hand edit leaves a session without one; its next resume,
            // close or whole save makes it again): read
            // as live when the server stopped, which `Hub.init` counts as in use until the
            // restart, so the window is not expired as idle since it was created.
            liveness = (createdAt, createdAt, 0)
            issues.append(LoadIssue(record: record, field: "liveness",
                                    problem: "no row in session_liveness, read as live until the restart"))
        }
        return SceneSession(
            id: SessionID(id), secretHash: SecretHash(stored: row.text(at: 3) ?? ""),
            owner: OwnerKey(workspace: row.text(at: 1) ?? "", user: row.text(at: 2) ?? ""),
            role: role, configuration: row.text(at: 5) ?? "", title: row.text(at: 6) ?? "",
            subtitle: row.text(at: 15) ?? "",
            snapshot: decode(row.text(at: 7), record: record, field: "snapshot", issues: &issues),
            userInfo: userInfo,
            restoration: restoration(activity: row.text(at: 9), metadata: row.text(at: 10), record: record, issues: &issues),
            createdAt: createdAt, lastActiveAt: liveness.lastActiveAt, failedRestores: liveness.failedRestores,
            liveSince: liveness.liveSince)
    }

    private func restoration(activity: String?, metadata: String?, record: String,
                             issues: inout [LoadIssue]) -> Restoration? {
        if activity == nil && metadata == nil { return nil }
        guard let activity = decode(activity, record: record, field: "restoration_activity", issues: &issues),
              let metadata = decode(metadata, record: record, field: "restoration_meta", issues: &issues)
        else {
            issues.append(LoadIssue(record: record, field: "restoration", problem: "incomplete, so left out"))
            return nil
        }
        do {
            return Restoration(activity: try Activity(json: activity, field: "restoration_activity"),
                               metadata: try RestorationMetadata(json: metadata))
        } catch {
            issues.append(LoadIssue(record: record, field: "restoration", problem: "\(error.message), so left out"))
            return nil
        }
    }

    /// The JSON in `text`, or nil for SQL NULL and for text that does not parse (noted).
    private func decode(_ text: String?, record: String, field: String, issues: inout [LoadIssue]) -> JSONValue? {
        guard let text else { return nil }
        // The server wrote it, and no object it builds holds two keys equivalent only
        // canonically (`JSONObject`); text that does anyway (a hand edit) is read with both
        // keys rather than refused and lost.
        switch JSONCodec.decode(text, acceptingEquivalentKeys: true) {
        case .success(let value): return value
        case .failure(let error):
            issues.append(LoadIssue(record: record, field: field, problem: "not JSON: \(error.description)"))
            return nil
        }
    }

    private enum SQL {
        /// A session's row with its liveness (migration 13); the last column says the liveness
        /// row is missing.
        static let sessions = """
            SELECT s.id, s.workspace, s.user, s.secret_hash, s.role, s.configuration, s.title, s.snapshot, s.user_info,
                   s.restoration_activity, s.restoration_meta, s.created_at, l.last_active_at, l.failed_restores,
                   l.live_since, s.subtitle, l.session IS NULL
            FROM sessions AS s LEFT JOIN session_liveness AS l ON l.session = s.id ORDER BY s.id
            """
        static let domains = "SELECT workspace, user, version FROM preference_domains"
        static let domainVersion = "SELECT version FROM preference_domains WHERE workspace = ?1 AND user = ?2"
        static let domainValues = "SELECT key_path, value, version FROM preferences WHERE workspace = ?1 AND user = ?2"
        static let preferences = "SELECT workspace, user, key_path, value, version FROM preferences"
        static let documents = """
            SELECT id, workspace, title, kind, created_at, created_by, modified_at, revision, length
            FROM documents ORDER BY id
            """
        static let access = "SELECT document, version, grants, links FROM document_access"
        static let linkSecret = "SELECT value FROM deployment_secrets WHERE name = 'document-links'"
    }
}

extension DocumentRecord {
    /// The record in a row's first nine columns, in the order of the `documents` table.
    init(row: SQLiteStatement) {
        self.init(id: DocumentID(row.text(at: 0) ?? ""), workspace: row.text(at: 1) ?? "", title: row.text(at: 2) ?? "",
                  kind: row.text(at: 3) ?? "text", createdAt: row.int64(at: 4), createdBy: row.text(at: 5) ?? "",
                  modifiedAt: row.int64(at: 6), revision: row.int64(at: 7), length: Int(truncatingIfNeeded: row.int64(at: 8)))
    }
}

extension PreferenceDomain {
    /// The domain in a row's first two columns; user '' is the workspace domain.
    fileprivate init(row: SQLiteStatement) {
        let user = row.text(at: 1) ?? ""
        self.init(workspace: row.text(at: 0) ?? "", user: user.isEmpty ? nil : user)
    }
}
