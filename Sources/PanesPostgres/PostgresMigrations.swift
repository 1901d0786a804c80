// Threading: runs on the thread that opens the store, before the store is handed on.

/// The PostgreSQL schema's history, recorded in `schema_migrations`. Adding to the schema is
/// appending one entry to `all`; an entry that has shipped is never edited.
///
/// Several nodes may start at once against one database: `migrate` holds a session-level
/// advisory lock while it looks and migrates, so exactly one of them applies each step and
/// the others find it done. Each step runs in its own transaction with its row in
/// `schema_migrations`, so a crash between steps leaves a known version.
///
/// The tables mirror the SQLite store's (`PanesStorage/Migrations.swift`), plus what nodes
/// sharing the database need: session claims, the record sequence, the preference change
/// log and node leases. Times are bigint milliseconds since the epoch, as in SQLite; JSON is
/// `text` holding exactly what `JSONCodec` wrote (jsonb would refuse `\u0000` and reorder
/// keys); identifiers sort bytewise (`COLLATE "C"`) as SQLite sorts them. `workspace` and
/// `user_name` keep the database's collation: PostgreSQL 15's default collation is always
/// deterministic, and a deterministic collation calls two texts equal only when their bytes are
/// (checked under an ICU `en-US` default too), so users whose names are canonically equivalent
/// keep their own rows; nothing is ordered by them.
public enum PostgresMigrations {
    struct Step: Sendable {
        let version: Int64
        let name: String
        let sql: String
    }

    /// The advisory lock's key (two int4s, a space apart from the stores' bigint keys):
    /// "panes" and "migrate" in ASCII, so it is recognisable in `pg_locks`.
    static let lockKey = (Int64(0x7061_6e65), Int64(0x6d69_6772))

    static let all: [Step] = [
        Step(version: 1, name: "sessions, preferences, documents, and what nodes share", sql: """
            CREATE TABLE sessions (
                id text COLLATE "C" NOT NULL PRIMARY KEY,
                workspace text NOT NULL,
                user_name text NOT NULL,
                secret_hash text NOT NULL,
                role text NOT NULL,
                configuration text NOT NULL,
                title text NOT NULL,
                subtitle text NOT NULL DEFAULT '',
                snapshot text,                   -- JSON, or NULL for none
                user_info text NOT NULL,         -- JSON object
                restoration_activity text,       -- JSON, NULL together with restoration_meta
                restoration_meta text,           -- JSON
                created_at bigint NOT NULL,      -- milliseconds since the epoch
                last_active_at bigint NOT NULL,
                failed_restores bigint NOT NULL,
                live_since bigint
            );
            CREATE INDEX sessions_by_owner ON sessions (workspace, user_name);

            -- Which node holds a session live and its fencing epoch (the `.session` channel's
            -- version). No foreign key: a claim may be written before the session's row.
            CREATE TABLE session_claims (
                session text COLLATE "C" NOT NULL PRIMARY KEY,
                node text,                       -- NULL: released
                epoch bigint NOT NULL
            );

            -- user_name is '' for the workspace domain. version never goes backwards.
            -- log_floor: every change with a version above it is in preference_changes.
            CREATE TABLE preference_domains (
                workspace text NOT NULL,
                user_name text NOT NULL,
                version bigint NOT NULL,
                log_floor bigint NOT NULL DEFAULT 0,
                PRIMARY KEY (workspace, user_name)
            );
            CREATE TABLE preferences (
                workspace text NOT NULL,
                user_name text NOT NULL,
                key_path text NOT NULL,
                value text NOT NULL,             -- JSON
                version bigint NOT NULL,
                PRIMARY KEY (workspace, user_name, key_path),
                FOREIGN KEY (workspace, user_name) REFERENCES preference_domains ON DELETE CASCADE
            );
            -- Every put and removal, for nodes catching up; pruned by age, keeping the newest.
            CREATE TABLE preference_changes (
                workspace text NOT NULL,
                user_name text NOT NULL,
                version bigint NOT NULL,
                key_path text NOT NULL,
                value text,                      -- JSON; NULL for a removal
                changed_at bigint NOT NULL
            );
            CREATE INDEX preference_changes_by_domain ON preference_changes (workspace, user_name, version);

            CREATE TABLE documents (
                id text COLLATE "C" NOT NULL PRIMARY KEY,
                workspace text NOT NULL,
                title text NOT NULL,
                kind text NOT NULL,
                created_at bigint NOT NULL,
                created_by text NOT NULL,
                modified_at bigint NOT NULL,
                revision bigint NOT NULL,        -- the `.document` channel's version
                length bigint NOT NULL           -- Unicode scalars
            );
            CREATE INDEX documents_by_workspace ON documents (workspace);
            -- bytea: a document's text may hold U+0000, which PostgreSQL's text cannot.
            CREATE TABLE document_snapshots (
                document text COLLATE "C" NOT NULL PRIMARY KEY REFERENCES documents ON DELETE CASCADE,
                revision bigint NOT NULL,
                text bytea NOT NULL              -- UTF-8
            );
            CREATE TABLE document_operations (
                document text COLLATE "C" NOT NULL REFERENCES documents ON DELETE CASCADE,
                revision bigint NOT NULL,
                operation text NOT NULL,         -- JSON array, the wire form
                op_id text NOT NULL,
                author_scene text NOT NULL,
                author_user text NOT NULL,
                author_name text NOT NULL,
                created_at bigint NOT NULL,
                PRIMARY KEY (document, revision)
            );

            -- The store-wide order of writes to single-writer records (sessions and their
            -- claims, document records): one row per record with the sequence number of its
            -- last write. A deleted record keeps its row as a tombstone (deleted_at set) until
            -- pruned. Numbers are drawn under an advisory lock held to commit, so they become
            -- visible in order and a reader's cursor never skips a later commit.
            CREATE SEQUENCE record_seq;
            CREATE TABLE record_versions (
                kind text NOT NULL,              -- 'session' or 'document'
                id text COLLATE "C" NOT NULL,
                seq bigint NOT NULL,
                deleted_at bigint,
                PRIMARY KEY (kind, id)
            );
            CREATE INDEX record_versions_by_seq ON record_versions (seq);

            -- Signals between nodes too large for a NOTIFY payload: the payload names the row.
            -- Pruned after panes_signal_retention_ms.
            CREATE TABLE node_signals (
                id bigserial PRIMARY KEY,
                payload text NOT NULL,           -- NodeSignal JSON
                created_at bigint NOT NULL
            );

            -- Node leases, measured with the database's clock.
            CREATE TABLE nodes (
                id text NOT NULL PRIMARY KEY,
                lease_until bigint NOT NULL      -- milliseconds since the epoch
            );
            """),
        Step(version: 2, name: "drag endings", sql: """
            -- A drag's `.drag` channel: a row once it was dropped or cancelled, so of two drops
            -- through two nodes exactly one inserts it. Pruned an hour past expiry.
            CREATE TABLE drag_ends (
                drag text COLLATE "C" NOT NULL PRIMARY KEY,
                expires_at bigint NOT NULL       -- milliseconds since the epoch
            );
            CREATE INDEX drag_ends_by_expiry ON drag_ends (expires_at);
            """),
        Step(version: 3, name: "session revisions", sql: """
            -- Counted on by each write from the copy it was made from; a write from an older
            -- copy than the stored one is dropped (`SceneSession.revision`).
            ALTER TABLE sessions ADD COLUMN revision bigint NOT NULL DEFAULT 0;
            """),
        Step(version: 4, name: "no per-operation key check on the document log", sql: """
            -- The foreign key checked every logged operation on its own (an executor and a row
            -- lock each: an eighth of PostgreSQL's CPU on a busy document). Every append checks
            -- under the document's lock that the document is there, at the commit's base (its
            -- revision is read first), and a deletion takes that lock and deletes the log
            -- itself (`PostgresStore`).
            ALTER TABLE document_operations DROP CONSTRAINT document_operations_document_fkey;
            """),
        Step(version: 5, name: "documents remember applied op ids past their log", sql: """
            -- `AppliedStreams`, rewritten with each snapshot. Written today as JSON
            -- [[stream, counter, revision, at], …] (two streams may differ only in bytes); the object
            -- {"stream": [counter, revision, at], …} written before is still read. Step 11 marks the
            -- change, so nodes of older builds refuse.
            ALTER TABLE document_snapshots ADD COLUMN applied text NOT NULL DEFAULT '{}';
            """),
        Step(version: 6, name: "outcomes of requests sent with an idempotencyKey", sql: """
            -- A keyed request's outcome, written in the transaction of the change it reports, so a
            -- retry with the same key, through any node, is answered with it. The key is the
            -- client's bytes. Kept idempotencyRetentionMs, each user's newest
            -- maxIdempotencyKeysPerUser (pruned every walCheckpointIntervalMs).
            -- A row with `result` NULL is a node's reservation of the key (`node`): it handles the
            -- request, and no other node's attempt of it is written meanwhile.
            CREATE TABLE request_records (
                workspace text COLLATE "C" NOT NULL,
                user_name text COLLATE "C" NOT NULL,
                key bytea NOT NULL,
                fingerprint text NOT NULL,       -- the request's type and a hash of its fields
                result text,                     -- JSON: the reply's result; NULL while reserved
                created_at bigint NOT NULL,      -- milliseconds since the epoch
                node text,                       -- the node holding the reservation
                PRIMARY KEY (workspace, user_name, key)
            );
            CREATE INDEX request_records_by_age ON request_records (created_at);

            -- Each store transaction's mark, written in it: after a COMMIT whose answer was lost,
            -- the mark is there if and only if the transaction committed. (Transaction ids are not
            -- enough: after a crash, ids of transactions whose records never reached the log are
            -- handed out again.) Pruned after an hour.
            CREATE TABLE commit_markers (
                marker text COLLATE "C" NOT NULL PRIMARY KEY,
                created_at bigint NOT NULL
            );
            CREATE INDEX commit_markers_by_age ON commit_markers (created_at);
            """),
        Step(version: 7, name: "the webhook outbox", sql: PostgresWebhookOutbox.schema),
        Step(version: 8, name: "document versions", sql: """
            -- Named versions and automatic checkpoints: the document's text at a revision, kept
            -- with the record so reading one never depends on the log's retention. They go with
            -- their document (the foreign key: versions are written rarely, unlike the log).
            CREATE TABLE document_versions (
                seq bigserial PRIMARY KEY,       -- order of saving, for pruning checkpoints
                document text COLLATE "C" NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
                id text COLLATE "C" NOT NULL UNIQUE,
                kind text NOT NULL,              -- 'named' or 'checkpoint'
                revision bigint NOT NULL,
                name text,                       -- a named version's name, NULL for a checkpoint
                created_at bigint NOT NULL,      -- milliseconds since the epoch
                created_by text NOT NULL,        -- user id
                length bigint NOT NULL,          -- Unicode scalars
                text bytea NOT NULL              -- UTF-8
            );
            CREATE INDEX document_versions_by_document ON document_versions (document, seq);
            """),
        Step(version: 9, name: "rights per document: grants and links", sql: """
            -- A document's grants to users and its links, written and read whole (DocumentAccess):
            -- JSON arrays, links with their token's SHA-256 only. A change is a write to the
            -- document's record (record_versions), so other nodes read it with the record.
            CREATE TABLE document_access (
                document text COLLATE "C" NOT NULL PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
                version bigint NOT NULL,
                grants text NOT NULL,
                links text NOT NULL
            );
            """),
        Step(version: 10, name: "a secret to derive keyed links' tokens", sql: """
            -- Secrets of the deployment, made here once (the migration runs under its advisory
            -- lock, so on one node only) and read by every node at start: `document-links` is the
            -- key a keyed createDocumentLink's token is derived under (HMAC-SHA-256), so a retry
            -- through any node gets its token again though only the token's hash is kept.
            -- 32 bytes from two gen_random_uuid() (pg_strong_random; 244 random bits).
            CREATE TABLE deployment_secrets (
                name text COLLATE "C" NOT NULL PRIMARY KEY,
                value bytea NOT NULL
            );
            INSERT INTO deployment_secrets (name, value)
            VALUES ('document-links', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
            """),
        Step(version: 11, name: "applied op ids written as an array", sql: """
            -- Since this version a document's applied op ids are written as JSON
            -- [[stream, counter, revision, at], …] (step 5): two op-id streams that differ only in
            -- bytes are two entries, where an object could not hold both. A node of a build before
            -- it reads an array as "nothing applied" and would apply a resent edit twice, so the
            -- version moves and such a node refuses to start on this database. Rows in the object
            -- form are still read and are rewritten with their document's next snapshot; the empty
            -- default becomes the empty array here.
            UPDATE document_snapshots SET applied = '[]' WHERE applied = '{}';
            """),
        Step(version: 12, name: "drops onto a window on another node are settled once", sql: """
            -- A drop onto a window live on another node is settled once its drag has ended: that
            -- node delivers the items, or the dropping node gives them back to the dropper, by
            -- setting `settled` in a commit on the drag's channel at version 1 (version 2 once
            -- set), so exactly one of the two happens. A node of a build before it delivered
            -- such a drop without settling it, so the version moves.
            ALTER TABLE drag_ends ADD COLUMN settled boolean NOT NULL DEFAULT false;
            """),
        Step(version: 13, name: "drops held for their windows until sent", sql: """
            -- A drop's itemsDropped event for a window's session, written in the commit that
            -- settles the drop for that window and deleted once the window's node sent it: when
            -- that node dies between, the node that takes the session over sends it. Rows past
            -- kept_until (heldDropKeptMs) are deleted by the next drop held.
            CREATE TABLE held_drops (
                session text NOT NULL,
                drag text NOT NULL,
                event text NOT NULL,
                kept_until bigint NOT NULL,
                PRIMARY KEY (session, drag)
            );
            CREATE INDEX held_drops_by_kept_until ON held_drops (kept_until);
            """),
    ]

    /// The schema version this build writes and reads.
    static var latest: Int64 { all.last?.version ?? 0 }

    /// Brings the database up to `latest`, one step per transaction, under the advisory lock.
    /// - Throws: `PostgresError` with `.schemaTooNew` for a database migrated by a newer build,
    ///   which is left as it was.
    public static func migrate(_ connection: PostgresConnection) throws {
        try migrate(connection, through: latest)
    }

    /// `migrate`, stopping after step `target`: how a test makes the database an older build left.
    static func migrate(_ connection: PostgresConnection, through target: Int64) throws {
        for (previous, step) in zip(all, all.dropFirst()) {
            precondition(step.version > previous.version, "migrations must be numbered in increasing order")
        }
        try connection.query("SELECT pg_advisory_lock($1::int, $2::int)", [.int(lockKey.0), .int(lockKey.1)])
        defer {
            _ = try? connection.query("SELECT pg_advisory_unlock($1::int, $2::int)", [.int(lockKey.0), .int(lockKey.1)])
        }
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version bigint NOT NULL PRIMARY KEY,
                name text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
        let found = try version(connection)
        guard found <= latest else {
            throw PostgresError(.schemaTooNew,
                                "the database has schema version \(found), but this build knows only up to \(latest); "
                                    + "use a newer build of Panes, or another database")
        }
        for step in all where step.version > found && step.version <= target {
            // BEGIN and COMMIT by hand: a step is several statements in one string, which a
            // (pipelined) `transaction` cannot send.
            try connection.execute("BEGIN")
            do {
                do {
                    try connection.execute(step.sql)
                } catch var error {
                    error.message = "migration \(step.version) (\(step.name)) failed: \(error.message)"
                    throw error
                }
                try connection.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                                     [.int(step.version), .text(step.name)])
                try connection.execute("COMMIT")
            } catch {
                if connection.isConnected { _ = try? connection.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// The highest migration applied; 0 for a new database.
    public static func version(_ connection: PostgresConnection) throws(PostgresError) -> Int64 {
        try connection.integer("SELECT coalesce(max(version), 0)::bigint FROM schema_migrations") ?? 0
    }
}
