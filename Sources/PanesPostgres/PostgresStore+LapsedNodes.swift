// Threading: called by the thread that owns this store (the heartbeat's, for the heartbeat's
// own store; the store thread, for `fence(as:leaseMs:)`).
public import PanesCore

/// A lapsed node's connections to the database, ended so that its lease can be (issue 27 §3).
///
/// Ending a node's lease locks its row (`endLease`), so it waits for a transaction of that node
/// that holds the row: a renewal, or a store transaction's fence. One left idle ends after a
/// lease (`idle_in_transaction_session_timeout`), but one whose statement is still running
/// when the node is cut off (waiting for a lock, or sending rows the node never reads) does
/// not, and TCP gives up on its connection only some 15 minutes later: until then the lease
/// stays unended, and every connect for one of the node's sessions waits and is told
/// `storage_failed`. So once the lease has run out on the database's clock, a node check that
/// could not end it ends that node's backends (`pg_terminate_backend`) and tries once more.
///
/// Each connection made for a node identity carries it in `application_name` from its start
/// (`applicationName(for:)`), and a new identity gets new connections, never a renamed one
/// (`adopt`). A lease that ran out is never renewed, and a process that rejoins does so under
/// a new identity: so a backend named for a lapsed identity works for nothing alive, and a
/// node that rejoined is never ended for its old identity. (What is left: a backend that exits
/// between the check's read of `pg_stat_activity` and its signal, and whose process id the
/// kernel gives a new backend in that instant; Linux hands ids out in turn, so that needs a
/// whole round of them.)
extension PostgresStore {
    /// The `application_name` of `node`'s connections; nil for an identity PostgreSQL could not
    /// hold whole (it cuts names at 63 bytes and turns bytes outside printable ASCII into `?`,
    /// so two identities could share one): such a node's connections keep the URL's name, and
    /// are never ended by another node. `ClusterNode.makeID()` ids fit.
    static func applicationName(for node: NodeID) -> String? {
        let name = "panes:" + node.rawValue
        guard name.utf8.count <= 63, name.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) else { return nil }
        return name
    }

    /// Makes this store's connection one of `node`'s: a connection named for another identity
    /// (or for none) is closed, and the next call connects anew under `node`'s name. What was
    /// kept about the closed connection's session (`lockedBackend`, `lockedNodes`) is forgotten
    /// with it: the new backend could be given the old one's process id.
    func adopt(_ node: NodeID) {
        let name = Self.applicationName(for: node)
        guard name != connection.applicationName else { return }
        connection.applicationName = name
        connection.close()
        lockedBackend = 0
        lockedNodes = []
    }

    /// Ends the backends named for `other` (`applicationName(for:)`) in this database if its
    /// lease has run out and not ended, and returns how many: what another node's transaction
    /// holding its row needs once that node is cut off.
    ///
    /// Backends this node's role may not signal (a superuser's, or another role's without
    /// `pg_signal_backend`: `docs/operating.md`) are left out of the statement, so that a
    /// refusal for one does not undo the count of those signalled (a signal is not taken back
    /// with the statement), and are noted as a refusal; the lease then ends once they end by
    /// themselves. A refusal the database still makes (SQLSTATE 42501: the roles changed in
    /// between) is noted the same way, and any other error as a failure; both count none.
    func endBackends(of other: NodeID) throws -> Int {
        guard let name = Self.applicationName(for: other) else { return 0 }
        let rows: PostgresRows
        switch Result(catching: { () throws(PostgresError) -> PostgresRows in
            try connection.query(LapsedSQL.endBackends, [.text(other.rawValue), .text(name)])
        }) {
        case .success(let answer):
            rows = answer
        case .failure(let error) where error.kind == .server && error.sqlState == Self.insufficientPrivilege:
            leaseEndingNotes.append(.connectionsNotEnded(other, reason: "\(Self.insufficientPrivilege): \(error.message)"))
            return 0
        case .failure(let error) where error.kind == .server:
            leaseEndingNotes.append(.connectionsEndingFailed(other, error: error.description))
            return 0
        case .failure(let error):
            throw error
        }
        let ended = Int(rows.count > 0 ? rows.int64(0, 0) ?? 0 : 0)
        let refused = Int(rows.count > 0 ? rows.int64(0, 1) ?? 0 : 0)
        if ended > 0 { leaseEndingNotes.append(.connectionsEnded(other, count: ended)) }
        if refused > 0 {
            leaseEndingNotes.append(.connectionsNotEnded(
                other, reason: "\(Self.insufficientPrivilege): \(refused) of its connections run under a role this "
                    + "node's role may not signal (a superuser, or another role, without pg_signal_backend)"))
        }
        return ended
    }

    /// PostgreSQL's insufficient_privilege: what `pg_terminate_backend` says when the caller may
    /// not signal a backend.
    static let insufficientPrivilege = "42501"

    /// `NodeLeases.takeLeaseEndingNotes`.
    public func takeLeaseEndingNotes() -> [LeaseEndingNote] {
        defer { leaseEndingNotes = [] }
        return leaseEndingNotes
    }

    enum LapsedSQL {
        /// `endLease` tried again after `other`'s backends were ended: only if the lease has
        /// still run out. They were ended because it had as the signalling statement saw it,
        /// but a renewal that began before then (its `now()` is its start) may commit in between
        /// and keep the lease running; the row is checked again as it is once locked (READ
        /// COMMITTED re-reads the newest version of a row it waited for), so that renewal stands.
        static let endRunOutLease = """
            WITH locked AS (SELECT id FROM nodes WHERE id = $1 AND lease_until >= 0
                                AND lease_until < (extract(epoch FROM now()) * 1000)::bigint FOR UPDATE)
            UPDATE nodes AS n SET lease_until = -1 FROM locked WHERE n.id = locked.id
            RETURNING 1
            """

        /// How many of the backends named $2 were signalled, and how many were left alone
        /// because this role may not signal them (PostgreSQL's own rule: only a superuser
        /// signals a superuser's backend; otherwise the role must have the privileges of the
        /// backend's role, or of `pg_signal_backend`). Only if the lease ran out on the
        /// database's clock and was not ended (-1), checked in the same statement as the
        /// signals: a select list is computed for the rows its `WHERE` kept, and `OFFSET 0`
        /// keeps the subqueries as they are written. The asking backend is left out.
        static let endBackends = """
            SELECT count(*) FILTER (WHERE t.signalled)::bigint, count(*) FILTER (WHERE NOT t.permitted)::bigint
            FROM (SELECT CASE WHEN n.permitted THEN pg_terminate_backend(n.pid) ELSE false END AS signalled, n.permitted
                  FROM (SELECT a.pid,
                               COALESCE((NOT r.rolsuper OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user))
                                        AND (pg_has_role(a.usesysid, 'USAGE') OR pg_has_role('pg_signal_backend', 'USAGE')),
                                        false) AS permitted
                        FROM pg_stat_activity AS a LEFT JOIN pg_roles AS r ON r.oid = a.usesysid
                        WHERE a.application_name = $2 COLLATE "C" AND a.pid <> pg_backend_pid()
                          AND a.datname = current_database()
                          AND EXISTS (SELECT 1 FROM nodes WHERE id = $1 AND lease_until >= 0
                                      AND lease_until < (extract(epoch FROM now()) * 1000)::bigint)
                        OFFSET 0) AS n
                  OFFSET 0) AS t
            """
    }
}
