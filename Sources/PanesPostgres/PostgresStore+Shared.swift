// Threading: called on the store thread only, between batches.
public import PanesCore
internal import PanesJSON

extension PostgresStore {
    /// Sessions (with their claims) and document records written or deleted after `cursor`,
    /// oldest first, from one snapshot. Each record comes once, as it is now.
    public func loadRecordChanges(after cursor: Int64) throws -> RecordChanges {
        try connection.transaction(isolation: "REPEATABLE READ READ ONLY") {
            var changes = RecordChanges(cursor: max(cursor, try connection.integer(ReadSQL.recordCursor) ?? 0))
            let sessions = try connection.query(SharedSQL.changedSessions, [.int(cursor)])
            for row in 0..<sessions.count {
                guard !sessions.isNull(row, 16) else {
                    changes.deletedSessions.append(SessionID(sessions.text(row, 0) ?? ""))
                    continue
                }
                let session = session(sessions, row, revisionColumn: 19)
                changes.sessions.append(session)
                changes.claims[session.id] = SessionClaim(node: sessions.text(row, 17).map(NodeID.init),
                                                          epoch: sessions.int64(row, 18))
            }
            let documents = try connection.query(SharedSQL.changedDocuments, [.int(cursor)])
            for row in 0..<documents.count {
                if documents.isNull(row, 9) {
                    changes.deletedDocuments.append(DocumentID(documents.text(row, 0) ?? ""))
                } else {
                    let record = record(documents, row)
                    changes.documents.append(record)
                    changes.access[record.id] = documents.isNull(row, 10) ? DocumentAccess() : DocumentAccess(
                        grants: decode(documents.text(row, 11)), links: decode(documents.text(row, 12)),
                        version: documents.int64(row, 10))
                }
            }
            return changes
        }
    }

    /// A domain's changes after `version`, in version order; nil when the log was pruned past
    /// `version` (its `log_floor` is above it).
    public func loadPreferenceChanges(_ domain: PreferenceDomain, after version: Int64) throws -> [PreferenceChange]? {
        let user = try column(for: domain)
        return try connection.transaction(isolation: "REPEATABLE READ READ ONLY") { () -> [PreferenceChange]? in
            let floor = try connection.integer(SharedSQL.logFloor, [.text(domain.workspace), .text(user)]) ?? 0
            guard version >= floor else { return nil }
            let rows = try connection.query(SharedSQL.preferenceChanges, [.text(domain.workspace), .text(user), .int(version)])
            var changes: [PreferenceChange] = []
            for row in 0..<rows.count {
                let value: JSONValue?
                if rows.isNull(row, 2) {
                    value = nil
                } else {
                    guard let decoded = decode(rows.text(row, 2)) else {
                        throw PostgresError(.unexpectedResult, "preference change \(domain) \(rows.text(row, 0) ?? "") "
                                                + "at version \(rows.int64(row, 1)) is not JSON")
                    }
                    value = decoded
                }
                changes.append(PreferenceChange(keyPath: rows.text(row, 0) ?? "", value: value, version: rows.int64(row, 1)))
            }
            return changes
        }
    }

    /// A document's operations after `revision`, oldest first; nil when the document is gone
    /// or its log no longer reaches back to `revision + 1`.
    public func loadOperations(_ id: DocumentID, after revision: Int64) throws -> [StoredOperation]? {
        try connection.transaction(isolation: "REPEATABLE READ READ ONLY") { () -> [StoredOperation]? in
            let rows = try connection.query(SharedSQL.logReach, [.text(id.rawValue)])
            guard rows.count > 0 else { return nil }
            let current = rows.int64(0, 0)
            let oldest = rows.optionalInt64(0, 1)
            guard revision >= current || oldest.map({ $0 <= revision + 1 }) == true else { return nil }
            return try operations(id, after: revision)
        }
    }

    /// Marks `node` alive until `leaseMs` from now by the database's clock, holds its liveness
    /// lock on this connection, ends the lease of nodes whose lock is free (`checkNodes`), and
    /// returns the nodes whose lease has run out, sorted by id.
    public func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        try holdLivenessLock(of: node, leaseMs: leaseMs)
        let expired: [NodeID]
        do {
            expired = try renewLease(of: node, leaseMs: leaseMs)
        } catch {
            // A failed transaction took back the keepalive settings made in it (not the lock):
            // they are made again on the next try.
            lockedBackend = 0
            throw error
        }
        return expired
    }

    private func renewLease(of node: NodeID, leaseMs: Int) throws -> [NodeID] {
        try connection.transaction {
            // The transaction may run on a new connection (the last one was lost): the lock is
            // taken on it before the lease is renewed, or another node could find the renewed
            // lease's lock free in between and end it (a session-level lock taken in a
            // transaction stays taken whatever becomes of the transaction).
            try lockOnThisConnection(node, leaseMs: leaseMs)
            // Renewed too late (a stall, a partition, or its lock found free): others may have
            // taken this node's sessions over meanwhile, so it is reported among the expired.
            let lapsed = try connection.integer(SharedSQL.ownLeaseLapsed, [.text(node.rawValue)]) == 1
            try connection.query(SharedSQL.heartbeat, [.text(node.rawValue), .int(Int64(leaseMs))])
            try connection.query(SharedSQL.revokeUnlocked, [.text(node.rawValue), .int(Int64(leaseMs))])
            let rows = try connection.query(SharedSQL.expiredNodes)
            return (0..<rows.count).map { NodeID(rows.text($0, 0) ?? "") } + (lapsed ? [node] : [])
        }
    }

    /// Ends the lease of every other node whose liveness lock no session holds, and returns
    /// the nodes whose lease has run out, sorted by id (`SharedStore.checkNodes`).
    public func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        try connection.transaction {
            try connection.query(SharedSQL.revokeUnlocked, [.text(node.rawValue), .int(Int64(leaseMs))])
            let rows = try connection.query(SharedSQL.expiredNodes)
            return (0..<rows.count).map { NodeID(rows.text($0, 0) ?? "") }
        }
    }

    /// Takes `node`'s liveness lock (a session-level advisory lock, which PostgreSQL lets go
    /// when this connection ends) unless this connection holds it already.
    ///
    /// Only a connection's end frees the lock, and a connection ends at once when its process
    /// dies (the kernel closes the socket), but only after TCP keepalives give up when the node
    /// is cut off. So the database's side of this connection is told not to give up before the
    /// lease would run out anyway (keepalive idle and interval of the lease's length, two
    /// probes, and no TCP user timeout, whatever the server's configuration says): a partition
    /// never frees the lock before the lease ends, and a partitioned node, which stops serving
    /// a heartbeat before its lease ends, is never taken over while it serves.
    func holdLivenessLock(of node: NodeID, leaseMs: Int) throws {
        try connection.reconnectIfNeeded()
        try lockOnThisConnection(node, leaseMs: leaseMs)
    }

    /// `holdLivenessLock` on the connection as it is (inside a transaction too).
    private func lockOnThisConnection(_ node: NodeID, leaseMs: Int) throws {
        let backend = connection.backendPID
        if backend != lockedBackend {
            let seconds = max(1, (leaseMs + 999) / 1_000)
            try connection.execute("SET tcp_keepalives_idle = \(seconds); SET tcp_keepalives_interval = \(seconds); "
                                   + "SET tcp_keepalives_count = 2; SET tcp_user_timeout = 0")
            lockedBackend = backend
            lockedNodes = []
        }
        guard !lockedNodes.contains(node) else { return }
        // Another session holding it means this node's previous connection lingers in the
        // database: the node counts as alive until it goes, then this one takes the lock.
        if try connection.integer(SharedSQL.tryLivenessLock, [.text(Self.livenessLockKey(node))]) == 1 {
            lockedNodes.insert(node)
        }
    }

    /// What a node's liveness lock is keyed on: `hashtextextended` of this, a bigint.
    static func livenessLockKey(_ node: NodeID) -> String { "panes-node:" + node.rawValue }

    /// Prunes what only catching-up nodes read, past its retention (`PostgresSettings`):
    /// tombstones in `record_versions` (never the newest row, which carries the cursor),
    /// old preference changes beyond each domain's newest `preferenceLogMinEntries` (raising
    /// the domain's `log_floor` first), long-dead nodes, stored signals and commit markers. Called every
    /// `walCheckpointIntervalMs` by the store thread.
    public func checkpoint() throws {
        try connection.transaction {
            try connection.query(SharedSQL.pruneTombstones, [.int(settings.recordTombstoneMs)])
            let cutoff = [PostgresValue.int(settings.preferenceLogRetentionMs), .int(settings.preferenceLogMinEntries)]
            try connection.query(SharedSQL.raiseLogFloors, cutoff)
            try connection.query(SharedSQL.prunePreferenceChanges, cutoff)
            try connection.query(SharedSQL.pruneNodes, [.int(settings.deadNodeRetentionMs)])
            try connection.query(SharedSQL.pruneSignals, [.int(settings.signalRetentionMs)])
            try connection.query(SharedSQL.pruneMarkers, [.int(settings.commitMarkerRetentionMs)])
        }
    }

    private enum SharedSQL {
        static let nowMs = "(extract(epoch FROM now()) * 1000)::bigint"
        static let changedSessions = """
            SELECT r.id, s.workspace, s.user_name, s.secret_hash, s.role, s.configuration, s.title, s.snapshot,
                   s.user_info, s.restoration_activity, s.restoration_meta, s.created_at, s.last_active_at,
                   s.failed_restores, s.live_since, s.subtitle, s.id, c.node, coalesce(c.epoch, 0)::bigint, s.revision
            FROM record_versions AS r
            LEFT JOIN sessions AS s ON s.id = r.id
            LEFT JOIN session_claims AS c ON c.session = r.id
            WHERE r.kind = 'session' AND r.seq > $1 ORDER BY r.seq
            """
        static let changedDocuments = """
            SELECT r.id, d.workspace, d.title, d.kind, d.created_at, d.created_by, d.modified_at, d.revision, d.length,
                   d.id, a.version, a.grants, a.links
            FROM record_versions AS r LEFT JOIN documents AS d ON d.id = r.id
            LEFT JOIN document_access AS a ON a.document = r.id
            WHERE r.kind = 'document' AND r.seq > $1 ORDER BY r.seq
            """
        static let logFloor = "SELECT log_floor FROM preference_domains WHERE workspace = $1 AND user_name = $2"
        static let preferenceChanges = """
            SELECT key_path, version, value FROM preference_changes
            WHERE workspace = $1 AND user_name = $2 AND version > $3 ORDER BY version
            """
        static let logReach = """
            SELECT d.revision, (SELECT min(o.revision) FROM document_operations AS o WHERE o.document = d.id)
            FROM documents AS d WHERE d.id = $1
            """
        static let heartbeat = """
            INSERT INTO nodes (id, lease_until) VALUES ($1, \(nowMs) + $2)
            ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until
            """
        static let ownLeaseLapsed = "SELECT CASE WHEN lease_until < \(nowMs) THEN 1 ELSE 0 END FROM nodes WHERE id = $1"
        static let expiredNodes = "SELECT id FROM nodes WHERE lease_until < \(nowMs) ORDER BY id COLLATE \"C\""
        static let tryLivenessLock = "SELECT CASE WHEN pg_try_advisory_lock(hashtextextended($1, 0)) THEN 1 ELSE 0 END"
        /// Nodes alive by their lease whose liveness lock nobody holds: their connection ended
        /// (the process died), so their lease ends now (-1: before any clock). Only nodes that
        /// renewed (lease end less the lease, $2) since the database started: a restart ends
        /// every connection, and a node that has not heartbeated since has not had the chance to
        /// take its lock again. A bigint advisory lock shows in `pg_locks` as its high and low
        /// 32 bits, `objsubid` 1.
        static let revokeUnlocked = """
            WITH held AS (
                SELECT l.classid, l.objid FROM pg_locks AS l
                WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
            UPDATE nodes AS n SET lease_until = -1
            WHERE n.id <> $1 AND n.lease_until >= \(nowMs)
              AND n.lease_until - $2 > (extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint
              AND NOT EXISTS (
                SELECT 1 FROM held AS h
                WHERE h.classid = ((hashtextextended('panes-node:' || n.id, 0) >> 32) & 4294967295)::oid
                  AND h.objid = (hashtextextended('panes-node:' || n.id, 0) & 4294967295)::oid)
            """

        static let pruneTombstones = """
            DELETE FROM record_versions
            WHERE deleted_at < \(nowMs) - $1 AND seq < (SELECT max(seq) FROM record_versions)
            """
        /// The changes that go: older than the retention, and not among their domain's newest.
        static let doomed = """
            SELECT workspace, user_name, version FROM (
                SELECT workspace, user_name, version, changed_at,
                       row_number() OVER (PARTITION BY workspace, user_name ORDER BY version DESC) AS newest
                FROM preference_changes) AS ranked
            WHERE changed_at < \(nowMs) - $1 AND newest > $2
            """
        static let raiseLogFloors = """
            UPDATE preference_domains AS p SET log_floor = greatest(p.log_floor, gone.version)
            FROM (SELECT workspace, user_name, max(version) AS version FROM (\(doomed)) AS d
                  GROUP BY workspace, user_name) AS gone
            WHERE p.workspace = gone.workspace AND p.user_name = gone.user_name
            """
        static let prunePreferenceChanges = """
            DELETE FROM preference_changes AS c USING (\(doomed)) AS gone
            WHERE c.workspace = gone.workspace AND c.user_name = gone.user_name AND c.version = gone.version
            """
        static let pruneNodes = "DELETE FROM nodes WHERE lease_until < \(nowMs) - $1"
        static let pruneMarkers = "DELETE FROM commit_markers WHERE created_at < \(nowMs) - $1"
        static let pruneSignals = "DELETE FROM node_signals WHERE created_at < \(nowMs) - $1"
    }
}
