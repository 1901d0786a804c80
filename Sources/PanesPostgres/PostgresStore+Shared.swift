// Threading: called by the thread that owns this store (the store thread between batches, or
// the heartbeat thread for the heartbeat's own store).
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

    /// Enters `node` as alive until `leaseMs` from now and takes its liveness lock on a
    /// connection of its own (`adopt`: the one of an identity before it, left behind by a
    /// rejoin, is closed, and the locks it held go with it; that identity's lease has run out or
    /// ended by then); returns the other nodes gone now (`SharedStore.register`).
    public func register(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        try holdLivenessLock(of: node, leaseMs: leaseMs)
        let entered = try keepingLock {
            try connection.transaction {
                try lockOnThisConnection(node, leaseMs: leaseMs)
                return try connection.query(SharedSQL.register, [.text(node.rawValue), .int(Int64(leaseMs))]).count > 0
            }
        }
        // Only a retry after a lost COMMIT finds the row there, ended meanwhile.
        guard entered else { throw NodeRevoked(node: node) }
        return try checkNodes(node: node, leaseMs: leaseMs)
    }

    /// Renews `node`'s lease while it runs, holds its liveness lock on this connection, ends
    /// the lease of other nodes that are gone (`checkNodes`), and returns the other nodes whose
    /// lease has ended, sorted by id. Throws `NodeRevoked` when the lease had ended already.
    public func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        try holdLivenessLock(of: node, leaseMs: leaseMs)
        let (renewed, nodes) = try keepingLock {
            try connection.transaction {
                try lockOnThisConnection(node, leaseMs: leaseMs)
                try connection.send(SharedSQL.renew, [.text(node.rawValue), .int(Int64(leaseMs))])
                let renewed = try connection.query(SharedSQL.ownLease, [.text(node.rawValue)]).count > 0
                return (renewed, try connection.query(SharedSQL.otherNodes, [.text(node.rawValue), .int(Int64(leaseMs))]))
            }
        }
        guard renewed else {
            // Over for good: said at once, for every node to see, rather than at their next check.
            try connection.transaction { try connection.query(SharedSQL.endOwn, [.text(node.rawValue)]) }
            throw NodeRevoked(node: node)
        }
        return try endLeases(of: nodes, leaseMs: leaseMs, asking: node)
    }

    /// Runs a transaction that takes the liveness lock in it: a failed one took back the
    /// keepalive settings made in it (not the lock), so they are made again on the next try.
    private func keepingLock<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            lockedBackend = 0
            throw error
        }
    }

    /// Ends the lease of every other node whose lease ran out or whose liveness lock no session
    /// holds, and returns the other nodes whose lease has ended, sorted by id
    /// (`SharedStore.checkNodes`).
    public func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        let nodes = try connection.query(SharedSQL.otherNodes, [.text(node.rawValue), .int(Int64(leaseMs))])
        return try endLeases(of: nodes, leaseMs: leaseMs, asking: node)
    }

    /// Ends the leases `otherNodes` found to end, one node per transaction, and returns the
    /// nodes whose lease has ended.
    ///
    /// Each waits for the node's store transaction under way, if any (`fence(as:)` holds a key
    /// share lock on the node's row, which `FOR UPDATE` waits for): that transaction commits
    /// before the lease ends, and nothing the node commits comes after. The wait is bounded
    /// (a tenth of the lease, at least 50 ms), so a node whose transaction lingers (frozen, or
    /// cut off in the middle of one, until the database ends it: `idle_in_transaction_session_
    /// timeout` is the lease) holds up neither this heartbeat nor the other nodes: its lease is
    /// ended at a later check, and until then it is not reported gone. A node whose lease has
    /// run out has its backends ended first (`endBackends`): a transaction whose statement is
    /// still running is ended by no limit of the database's.
    private func endLeases(of nodes: PostgresRows, leaseMs: Int, asking node: NodeID) throws -> [NodeID] {
        var gone: [NodeID] = []
        for row in 0..<nodes.count {
            let other = NodeID(nodes.text(row, 0) ?? "")
            guard nodes.int64(row, 1) == 1 else {
                gone.append(other)
                continue
            }
            do {
                if try endLease(of: other, leaseMs: leaseMs) { gone.append(other) }
            } catch let error as PostgresError where error.sqlState == "57014" {
                // Its transaction under way did not end within the wait. If its lease has run
                // out, its backends are ended (`endBackends`) and the end tried once more; else
                // (or if that waits too) it is left for the next check.
                guard try endBackends(of: other) > 0 else { continue }
                do {
                    if try endLease(of: other, leaseMs: leaseMs, onlyIfRunOut: true) { gone.append(other) }
                } catch let error as PostgresError where error.sqlState == "57014" {
                    continue
                }
            }
        }
        return gone.sorted()
    }

    /// Ends `other`'s lease once its row can be locked, waiting a tenth of the lease at most
    /// (at least 50 ms; SQLSTATE 57014 after that); false when it had ended already, or, with
    /// `onlyIfRunOut` (`LapsedSQL.endRunOutLease`), when it runs again.
    func endLease(of other: NodeID, leaseMs: Int, onlyIfRunOut: Bool = false) throws -> Bool {
        try connection.transaction {
            try connection.send(SharedSQL.endLeaseTimeout, [.text("\(max(50, leaseMs / 10))ms")])
            return try connection.query(onlyIfRunOut ? LapsedSQL.endRunOutLease : SharedSQL.endLease,
                                        [.text(other.rawValue)]).count > 0
        }
    }

    /// Makes every later `apply` a write of `node` (`SharedStore.fence(as:leaseMs:)`), and has
    /// the database end this connection's transactions that stay idle for a lease
    /// (`idle_in_transaction_session_timeout`, on every connection it makes from now on): a
    /// node frozen or cut off in the middle of one would otherwise hold its fence's lock, and
    /// so its own lease, for as long as TCP takes to give up on it.
    ///
    /// A node's connection carries its name (`adopt`), so that another node can end it once
    /// this node's lease has run out (`endBackends`); the first fence, and each new identity's,
    /// makes the next transaction connect anew.
    public func fence(as node: NodeID?, leaseMs: Int) {
        fencingNode = node
        if let node { adopt(node) }
        let setUp = ["SET idle_in_transaction_session_timeout = \(max(1_000, leaseMs))"]
        guard connection.setUp != setUp else { return }
        connection.setUp = setUp
        // On the connection there is now; one that cannot take it is made again, with it.
        if connection.isConnected, (try? connection.execute(setUp.joined(separator: "; "))) == nil { connection.close() }
    }

    /// Queues the fence's check as the first statement of a transaction: `node`'s lease runs,
    /// and its row is share-locked until the transaction ends, so another node ending the lease
    /// waits for it. Its answer comes with the transaction's next round trip.
    func sendFence(_ node: NodeID, _ fence: FenceCheck) throws {
        try connection.send(SharedSQL.fence, [.text(node.rawValue)]) { rows in fence.passed = rows.count > 0 }
    }

    /// Whether the fence's check passed, reading its answer first if it has not come yet (the
    /// round trip every transaction makes before its COMMIT: no extra one).
    func checkFence(_ node: NodeID, _ fence: FenceCheck) throws {
        if fence.passed == nil { try connection.answer() }
        guard fence.passed == true else { throw NodeRevoked(node: node) }
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
    ///
    /// The heartbeat's transactions lock the node's row (the renewal's UPDATE), and a node cut
    /// off between two of a renewal's round trips leaves its transaction open in the database;
    /// ending its lease waits for that lock (`endLease`). Keepalives do not end such a
    /// connection: the database has sent an answer the node cannot acknowledge, so the kernel
    /// retransmits it for its own timeout (some 15 minutes, with no TCP user timeout), and every
    /// other node found the lease ran out but never ended it (issue 27 §3: a reload forked).
    /// So this connection, like the store thread's (`fence(as:leaseMs:)`), has the database end
    /// a transaction left idle for a lease (`idle_in_transaction_session_timeout`); the row's
    /// lease has run out by then, since the renewal started it before it went idle.
    ///
    /// The connection is `node`'s alone (`adopt`): another node ends it once `node`'s lease has
    /// run out (`endBackends`), should a transaction of it still hold the row.
    func holdLivenessLock(of node: NodeID, leaseMs: Int) throws {
        adopt(node)
        try connection.reconnectIfNeeded()
        try lockOnThisConnection(node, leaseMs: leaseMs)
    }

    /// `holdLivenessLock` on the connection as it is, inside a transaction too: a transaction
    /// may run on a new connection (the last one was lost), and a lease renewed there must have
    /// its lock taken there first, or another node could find it free in between and end the
    /// lease (a session-level lock taken in a transaction stays taken whatever becomes of it).
    private func lockOnThisConnection(_ node: NodeID, leaseMs: Int) throws {
        let backend = connection.backendPID
        if backend != lockedBackend {
            let seconds = max(1, (leaseMs + 999) / 1_000)
            // A statement, not `SET`s run at once: in a transaction (pipeline mode) it is queued.
            try connection.query(SharedSQL.keepalives, [.text("\(seconds)"), .text("\(max(1_000, leaseMs))")])
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
        static let register = """
            INSERT INTO nodes (id, lease_until) VALUES ($1, \(nowMs) + $2)
            ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until WHERE nodes.lease_until >= \(nowMs)
            RETURNING 1
            """
        /// Renewed only while it runs: an ended lease stays ended.
        static let renew = "UPDATE nodes SET lease_until = \(nowMs) + $2 WHERE id = $1 AND lease_until >= \(nowMs)"
        static let ownLease = "SELECT 1 FROM nodes WHERE id = $1 AND lease_until >= \(nowMs)"
        static let endOwn = "UPDATE nodes SET lease_until = -1 WHERE id = $1 AND lease_until >= 0"
        /// The other nodes whose lease has ended (second column 0), and those whose lease is to
        /// end now (1): run out, or running while their liveness lock is free (their connection
        /// ended: the process died, or the connection was cut). For the lock, only nodes that
        /// renewed (lease end less the lease, $2) since the database started: a restart ends
        /// every connection, and a node that has not renewed since has not had the chance to
        /// take its lock again. A bigint advisory lock shows in `pg_locks` as its high and low
        /// 32 bits, `objsubid` 1.
        static let otherNodes = """
            WITH held AS (
                SELECT l.classid, l.objid FROM pg_locks AS l
                WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
            SELECT n.id, CASE WHEN n.lease_until < 0 THEN 0 ELSE 1 END::bigint FROM nodes AS n
            WHERE n.id <> $1 AND (n.lease_until < \(nowMs) OR (
                n.lease_until - $2 > (extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint
                AND NOT EXISTS (
                    SELECT 1 FROM held AS h
                    WHERE h.classid = ((hashtextextended('panes-node:' || n.id, 0) >> 32) & 4294967295)::oid
                      AND h.objid = (hashtextextended('panes-node:' || n.id, 0) & 4294967295)::oid)))
            ORDER BY n.id COLLATE "C"
            """
        /// Bounds the whole statement (a lock timeout would bound each of its lock waits: the
        /// row's tuple lock, then the transaction holding it).
        static let endLeaseTimeout = "SELECT set_config('statement_timeout', $1, true)"
        /// Ends a node's lease (-1: before any clock) once its row is locked `FOR UPDATE`, which
        /// waits for the key share lock of its store transaction under way (`fence`).
        static let endLease = """
            WITH locked AS (SELECT id FROM nodes WHERE id = $1 AND lease_until >= 0 FOR UPDATE)
            UPDATE nodes AS n SET lease_until = -1 FROM locked WHERE n.id = locked.id
            RETURNING 1
            """
        /// A store transaction's first statement: the node's lease runs, and its row stays
        /// share-locked (a key share lock, which the node's own renewals do not wait for) to the
        /// transaction's end.
        static let fence = "SELECT 1 FROM nodes WHERE id = $1 AND lease_until >= \(nowMs) FOR KEY SHARE"
        /// Keepalives for the heartbeat's connection (`holdLivenessLock`), and its limit on a
        /// transaction left idle ($2 ms), as `SET` would make them.
        static let keepalives = """
            SELECT set_config('tcp_keepalives_idle', $1, false), set_config('tcp_keepalives_interval', $1, false),
                   set_config('tcp_keepalives_count', '2', false), set_config('tcp_user_timeout', '0', false),
                   set_config('idle_in_transaction_session_timeout', $2, false)
            """
        static let tryLivenessLock = "SELECT CASE WHEN pg_try_advisory_lock(hashtextextended($1, 0)) THEN 1 ELSE 0 END"

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
        /// Long-gone nodes that no session's claim names any more: a claim naming a node the
        /// table has forgotten would read as held by a live node. An ended lease is -1, so a
        /// revoked node goes once its sessions have been taken over or released.
        static let pruneNodes = """
            DELETE FROM nodes AS n WHERE n.lease_until < \(nowMs) - $1
              AND NOT EXISTS (SELECT 1 FROM session_claims AS c WHERE c.node = n.id)
            """
        static let pruneMarkers = "DELETE FROM commit_markers WHERE created_at < \(nowMs) - $1"
        static let pruneSignals = "DELETE FROM node_signals WHERE created_at < \(nowMs) - $1"
    }
}
