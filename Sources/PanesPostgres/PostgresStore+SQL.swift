// Threading: constants, read by whichever thread runs a store's transaction.
import PanesCore

/// The SQL text of the store's writes, each prepared once per connection.
extension PostgresStore {
    enum WriteSQL {
        /// A transaction's own mark, for finding out after a lost COMMIT whether it committed.
        static let writeMarker = "INSERT INTO commit_markers (marker, created_at) VALUES ($1, \(nowMs))"
        static let findMarker = "SELECT count(*)::bigint FROM commit_markers WHERE marker = $1"
        static let lock = "SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))::bigint FROM unnest($1::text[]) AS k"
        static let storeSignal = """
            INSERT INTO node_signals (payload, created_at) VALUES ($1, \(nowMs))
            RETURNING id
            """
        static let nowMs = "(extract(epoch FROM now()) * 1000)::bigint"
        /// A row when a node other than $1 holds a running lease (`register`, `renew`).
        static let otherLeaseRuns = "SELECT 1::bigint FROM nodes WHERE id <> $1 AND lease_until >= \(nowMs) LIMIT 1"
        static let domainVersion = "SELECT version FROM preference_domains WHERE workspace = $1 AND user_name = $2"
        static let documentRevision = "SELECT revision FROM documents WHERE id = $1"
        static let sessionEpoch = "SELECT epoch FROM session_claims WHERE session = $1"
        static let sessionEpochs = "SELECT session, epoch FROM session_claims WHERE session = ANY($1::text[])"
        static let dragEnded = "SELECT CASE WHEN settled THEN 2 ELSE 1 END::bigint FROM drag_ends WHERE drag = $1"
        static let sessionRevision = "SELECT revision FROM sessions WHERE id = $1 FOR UPDATE"
        static let endDrag = "INSERT INTO drag_ends (drag, expires_at) VALUES ($1, $2) ON CONFLICT (drag) DO NOTHING"
        static let pruneDragEnds = "DELETE FROM drag_ends WHERE expires_at < $1"
        static let settleDrop = "UPDATE drag_ends SET settled = true WHERE drag = $1"
        static let holdDrop = """
            INSERT INTO held_drops (session, drag, event, kept_until) VALUES ($1, $2, $3, $4)
            ON CONFLICT (session, drag) DO NOTHING
            """
        /// Skips rows another transaction has locked (another node's prune, a release): the prune
        /// shares a batch of users' writes, which must never wait on it nor deadlock over it;
        /// what it skips, a later prune deletes.
        static let pruneHeldDrops = """
            DELETE FROM held_drops WHERE (session, drag) IN
                (SELECT session, drag FROM held_drops WHERE kept_until < $1 FOR UPDATE SKIP LOCKED)
            """
        static let releaseDrop = "DELETE FROM held_drops WHERE session = $1 AND drag = $2"
        static let deleteSessionHeldDrops = "DELETE FROM held_drops WHERE session = $1"
        static let heldDrops = """
            SELECT drag, event, kept_until FROM held_drops WHERE session = $1 AND kept_until >= $2
            ORDER BY kept_until, convert_to(drag, 'UTF8')
            """
        /// The record sequence's next number for a record ($kind, $id), as the last statement
        /// of a writing statement (a tombstone when $deleted = 1).
        static func recordVersion(kind: String, id: String, deleted: String) -> String {
            """
            INSERT INTO record_versions (kind, id, seq, deleted_at)
            VALUES (\(kind), \(id), nextval('record_seq'), CASE WHEN \(deleted) = 1 THEN \(nowMs) END)
            ON CONFLICT (kind, id) DO UPDATE SET seq = excluded.seq, deleted_at = excluded.deleted_at
                WHERE record_versions.deleted_at IS NULL
            RETURNING seq
            """
        }
        static let recordVersion = recordVersion(kind: "$1", id: "$2", deleted: "$3::bigint")
        /// Upserts the session and advances its record in one round trip. `$4`, the secret hash,
        /// is NULL for a hash read from a damaged record (`SecretHash.storedText`): the text stored
        /// is kept, and a new row gets 64 `f`s.
        static let upsertSession = """
            WITH session AS (
                INSERT INTO sessions (id, workspace, user_name, secret_hash, role, configuration, title, snapshot,
                                      user_info, restoration_activity, restoration_meta, created_at, last_active_at,
                                      failed_restores, live_since, subtitle, revision)
                SELECT $1::text, $2::text, $3::text, coalesce($4::text, '\(SecretHash.unmatchable.hex)'), $5::text,
                       $6::text, $7::text, $8::text, $9::text, $10::text, $11::text, $12::bigint, $13::bigint,
                       $14::bigint, $15::bigint, $16::text, $17::bigint
                WHERE NOT EXISTS (\(deletedSession))
                ON CONFLICT (id) DO UPDATE SET
                    workspace = excluded.workspace, user_name = excluded.user_name,
                    secret_hash = coalesce($4::text, sessions.secret_hash),
                    role = excluded.role, configuration = excluded.configuration, title = excluded.title,
                    snapshot = excluded.snapshot, user_info = excluded.user_info,
                    restoration_activity = excluded.restoration_activity, restoration_meta = excluded.restoration_meta,
                    created_at = excluded.created_at, last_active_at = excluded.last_active_at,
                    failed_restores = excluded.failed_restores, live_since = excluded.live_since,
                    subtitle = excluded.subtitle, revision = excluded.revision
                WHERE excluded.revision = 0 OR sessions.revision < excluded.revision
                RETURNING 1)
            INSERT INTO record_versions (kind, id, seq, deleted_at)
            SELECT 'session', $1, nextval('record_seq'), NULL FROM session
            ON CONFLICT (kind, id) DO UPDATE SET seq = excluded.seq, deleted_at = excluded.deleted_at
            RETURNING seq
            """
        /// A session's liveness columns (`StoreCommand.putSessionLiveness`), its record number
        /// moved on as a whole write's is; nothing for a session not stored.
        static let putSessionLiveness = """
            WITH session AS (
                UPDATE sessions SET last_active_at = $2::bigint, live_since = $3::bigint, failed_restores = $4::bigint
                WHERE id = $1::text
                RETURNING 1)
            INSERT INTO record_versions (kind, id, seq, deleted_at)
            SELECT 'session', $1, nextval('record_seq'), NULL FROM session
            ON CONFLICT (kind, id) DO UPDATE SET seq = excluded.seq, deleted_at = excluded.deleted_at
            RETURNING seq
            """
        /// A session deleted (its tombstone in `record_versions`, $1 its id): session ids are
        /// never used again, so a write to it from a node that has not read the deletion yet is
        /// dropped instead of bringing it back. A tombstone stays one until it is pruned.
        static let deletedSession = """
            SELECT 1 FROM record_versions WHERE kind = 'session' AND id = $1 AND deleted_at IS NOT NULL
            """
        static let deleteSession = "DELETE FROM sessions WHERE id = $1"
        static let deleteClaim = "DELETE FROM session_claims WHERE session = $1"
        static let upsertClaim = """
            INSERT INTO session_claims (session, node, epoch) SELECT $1::text, $2::text, $3::bigint
            WHERE NOT EXISTS (\(deletedSession))
            ON CONFLICT (session) DO UPDATE SET node = excluded.node, epoch = excluded.epoch
            """
        /// The claim ($1 session, $2 node or NULL, $3 epoch) and its session's record number
        /// moved on, in one statement: the claim's write runs whole whatever the record's part
        /// reads (a data-modifying `WITH`), and both see the statement's snapshot, as the two
        /// statements it replaces did (the claim's tombstone check read before either wrote).
        /// One statement fewer a resume on the shared store (in a failover storm 10,000 record
        /// statements took ~640 ms of PostgreSQL's time on their own).
        ///
        /// A claim naming a node ($2 not NULL) also says, in its second column (1 or 0), whether
        /// drops are held for the session (`HeldDrop`): the node attaching it reads them then, and
        /// a resume with nothing held reads nothing more (one probe of `held_drops`' key, in the
        /// statement the claim makes anyway).
        static let claimSession = "WITH claim AS (\(upsertClaim))\n"
            + recordVersion(kind: "'session'", id: "$1", deleted: "0")
            + ",\n    (CASE WHEN $2::text IS NOT NULL AND EXISTS (SELECT 1 FROM held_drops WHERE session = $1::text)"
            + " THEN 1 ELSE 0 END)::bigint"
        static let bumpDomain = """
            INSERT INTO preference_domains (workspace, user_name, version) VALUES ($1, $2, $3)
            ON CONFLICT (workspace, user_name) DO UPDATE
                SET version = greatest(preference_domains.version, excluded.version)
            RETURNING 1
            """
        /// Bumps the domain, sets the value and logs the change in one round trip
        /// ($1 workspace, $2 user, $3 version, $4 key path, $5 JSON).
        static let putPreference = """
            WITH domain AS (\(bumpDomain)),
            value AS (
                INSERT INTO preferences (workspace, user_name, key_path, value, version) VALUES ($1, $2, $4, $5, $3)
                ON CONFLICT (workspace, user_name, key_path) DO UPDATE SET value = excluded.value, version = excluded.version
                RETURNING 1)
            INSERT INTO preference_changes (workspace, user_name, version, key_path, value, changed_at)
            VALUES ($1, $2, $3, $4, $5, \(nowMs))
            """
        /// Bumps the domain, deletes the value and logs the removal in one round trip.
        static let removePreference = """
            WITH domain AS (\(bumpDomain)),
            gone AS (DELETE FROM preferences WHERE workspace = $1 AND user_name = $2 AND key_path = $4 RETURNING 1)
            INSERT INTO preference_changes (workspace, user_name, version, key_path, value, changed_at)
            VALUES ($1, $2, $3, $4, NULL, \(nowMs))
            """
        static let insertDocument = """
            INSERT INTO documents (id, workspace, title, kind, created_at, created_by, modified_at, revision, length)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """
        static let insertSnapshot = "INSERT INTO document_snapshots (document, revision, text) VALUES ($1, $2, $3)"
        static let renameDocument = "UPDATE documents SET title = $2 WHERE id = $1"
        /// Logs operations (one array element each, $2–$8) and advances the document to the
        /// last ($9 revision, $10 length, $11 time) in one round trip. For a document that is
        /// not there the subquery gives NULL and the insert fails (`document` is NOT NULL): one
        /// look-up per statement, where the foreign key checked each row.
        static let appendOperations = """
            WITH logged AS (
                INSERT INTO document_operations (document, revision, operation, op_id, author_scene, author_user,
                                                 author_name, created_at)
                SELECT (SELECT id FROM documents WHERE id = $1), o.revision, o.operation, o.op_id, o.author_scene,
                       o.author_user, o.author_name, o.created_at
                FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[])
                    AS o(revision, operation, op_id, author_scene, author_user, author_name, created_at)
                RETURNING 1)
            UPDATE documents SET revision = $9, length = $10, modified_at = $11 WHERE id = $1
            """
        static let snapshotDocument = "UPDATE document_snapshots SET revision = $2, text = $3, applied = $4 WHERE document = $1"
        static let pruneOperations = "DELETE FROM document_operations WHERE document = $1 AND revision >= $2 AND revision < $3"
        static let deleteDocument = "DELETE FROM documents WHERE id = $1"
        static let deleteOperations = "DELETE FROM document_operations WHERE document = $1"
        /// For an unknown document nothing is written (the SELECT finds no row).
        static let putAccess = """
            INSERT INTO document_access (document, version, grants, links)
            SELECT id, $2, $3, $4 FROM documents WHERE id = $1
            ON CONFLICT (document) DO UPDATE SET version = excluded.version, grants = excluded.grants, links = excluded.links
            """
        static let deleteAccess = "DELETE FROM document_access WHERE document = $1"
    }
}
