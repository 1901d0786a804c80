internal import PanesSecurity

/// The schema's history. Adding to the schema is appending one entry to `all`; an entry that
/// has shipped is never edited, because databases out there already ran it.
///
/// Every table that belongs to a session refers to `sessions(id)` with `ON DELETE CASCADE`
/// (the connection turns `foreign_keys` on), so deleting the session row deletes everything
/// stored for it. Sessions are upserted with `ON CONFLICT DO UPDATE`, never `INSERT OR
/// REPLACE`, which would delete the row and cascade away its children.
enum Migrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "sessions and preferences", sql: """
            CREATE TABLE sessions (
                id TEXT NOT NULL PRIMARY KEY,
                workspace TEXT NOT NULL,
                user TEXT NOT NULL,
                secret TEXT NOT NULL,
                role TEXT NOT NULL,
                configuration TEXT NOT NULL,
                title TEXT NOT NULL,
                snapshot TEXT,                  -- JSON, or NULL for none
                user_info TEXT NOT NULL,        -- JSON object
                restoration_activity TEXT,      -- JSON, NULL together with restoration_meta
                restoration_meta TEXT,          -- JSON
                created_at INTEGER NOT NULL,    -- milliseconds since the epoch
                last_active_at INTEGER NOT NULL,
                failed_restores INTEGER NOT NULL
            );
            CREATE INDEX sessions_by_owner ON sessions (workspace, user);

            -- One row per domain; user is '' for the workspace domain (real names are never empty).
            -- version never goes backwards, and removals bump it too.
            CREATE TABLE preference_domains (
                workspace TEXT NOT NULL,
                user TEXT NOT NULL,
                version INTEGER NOT NULL,
                PRIMARY KEY (workspace, user)
            );
            CREATE TABLE preferences (
                workspace TEXT NOT NULL,
                user TEXT NOT NULL,
                key_path TEXT NOT NULL,
                value TEXT NOT NULL,            -- JSON
                version INTEGER NOT NULL,
                PRIMARY KEY (workspace, user, key_path),
                FOREIGN KEY (workspace, user) REFERENCES preference_domains (workspace, user) ON DELETE CASCADE
            );
            """),
        Migration(version: 2, name: "documents and their operation logs", sql: """
            -- One row per workspace document. The snapshot is the text at snapshot_revision; the
            -- current text is the snapshot with the logged operations after it applied. snapshot_text
            -- is the last column so listing documents never reads the texts' overflow pages.
            CREATE TABLE documents (
                id TEXT NOT NULL PRIMARY KEY,
                workspace TEXT NOT NULL,
                title TEXT NOT NULL,
                kind TEXT NOT NULL,
                created_at INTEGER NOT NULL,    -- milliseconds since the epoch
                created_by TEXT NOT NULL,       -- user id
                modified_at INTEGER NOT NULL,
                revision INTEGER NOT NULL,      -- operations applied since creation
                length INTEGER NOT NULL,        -- Unicode scalars
                snapshot_revision INTEGER NOT NULL,
                snapshot_text TEXT NOT NULL
            );
            CREATE INDEX documents_by_workspace ON documents (workspace);

            -- The per-document operation log: each row takes the document from revision - 1 to
            -- revision. Rows before snapshot_revision - operationLogRetention are pruned.
            CREATE TABLE document_operations (
                document TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
                revision INTEGER NOT NULL,
                operation TEXT NOT NULL,        -- JSON array, the wire form
                op_id TEXT NOT NULL,            -- the client's id for it, for recognising resends
                author_scene TEXT NOT NULL,
                author_user TEXT NOT NULL,
                author_name TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (document, revision)
            ) WITHOUT ROWID;
            """),
        Migration(version: 3, name: "sessions remember whether a scene was live", sql: """
            -- Set while a scene is connected, cleared when it leaves: a session live when the server
            -- was killed counts as active until the restart, not idle since its last write.
            ALTER TABLE sessions ADD COLUMN live_since INTEGER;
            """),
        Migration(version: 4, name: "session secrets stored as SHA-256 hashes") { connection in
            try connection.execute("ALTER TABLE sessions RENAME COLUMN secret TO secret_hash")
            var plain: [(id: String, secret: String)] = []
            try connection.forEachRow("SELECT id, secret_hash FROM sessions") { row in
                plain.append((row.text(at: 0) ?? "", row.text(at: 1) ?? ""))
            }
            // secure_delete (set on every read-write connection) overwrites the old values in
            // their pages; the store checkpoints after migrating, so none stays in the log.
            for (id, secret) in plain {
                try connection.run("UPDATE sessions SET secret_hash = ?2 WHERE id = ?1",
                                   [.text(id), .text(Digest.sha256Hex(secret))])
            }
        },
        Migration(version: 5, name: "document snapshots in a table of their own", sql: """
            -- SQLite rewrites a whole row on UPDATE, so with the snapshot in `documents` every
            -- appended operation (which advances the document's revision) read and wrote the text
            -- again. Here the text is written only when a snapshot is taken.
            CREATE TABLE document_snapshots (
                document TEXT NOT NULL PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
                revision INTEGER NOT NULL,      -- the text is the document at this revision
                text TEXT NOT NULL
            );
            INSERT INTO document_snapshots (document, revision, text)
                SELECT id, snapshot_revision, snapshot_text FROM documents;
            ALTER TABLE documents DROP COLUMN snapshot_text;
            ALTER TABLE documents DROP COLUMN snapshot_revision;
            """),
        Migration(version: 6, name: "sessions have a switcher subtitle", sql: """
            -- The window's second line in the switcher (UIScene's subtitle), '' for none.
            ALTER TABLE sessions ADD COLUMN subtitle TEXT NOT NULL DEFAULT '';
            """),
        Migration(version: 7, name: "documents remember applied op ids past their log", sql: """
            -- For each op-id stream, the last operation the log no longer holds (`AppliedStreams`),
            -- rewritten with each snapshot. Written today as JSON [[stream, counter, revision, at], …]
            -- (two streams may differ only in bytes); the object {"stream": [counter, revision, at], …}
            -- written before is still read. Migration 14 marks the change, so older builds refuse.
            ALTER TABLE document_snapshots ADD COLUMN applied TEXT NOT NULL DEFAULT '{}';
            """),
        Migration(version: 8, name: "outcomes of requests sent with an idempotencyKey", sql: """
            -- A keyed request's outcome, written in the transaction of the change it reports, so a
            -- retry with the same key is answered with it. The key is the client's bytes, compared
            -- as bytes. Kept idempotencyRetentionMs, each user's newest maxIdempotencyKeysPerUser.
            CREATE TABLE request_records (
                workspace TEXT NOT NULL,
                user TEXT NOT NULL,
                key BLOB NOT NULL,
                fingerprint TEXT NOT NULL,      -- the request's type and a hash of its fields
                result TEXT NOT NULL,           -- JSON: the reply's result
                created_at INTEGER NOT NULL,    -- milliseconds since the epoch
                PRIMARY KEY (workspace, user, key)
            ) WITHOUT ROWID;
            """),
        Migration(version: 9, name: "the webhook outbox", sql: SQLiteWebhookOutbox.schema),
        Migration(version: 10, name: "document versions", sql: """
            -- Named versions and automatic checkpoints: the document's text at a revision, kept
            -- with the record so reading one never depends on the log's retention. They go with
            -- their document (ON DELETE CASCADE). The rowid orders them by saving.
            CREATE TABLE document_versions (
                document TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
                id TEXT NOT NULL UNIQUE,
                kind TEXT NOT NULL,             -- 'named' or 'checkpoint'
                revision INTEGER NOT NULL,
                name TEXT,                      -- a named version's name, NULL for a checkpoint
                created_at INTEGER NOT NULL,    -- milliseconds since the epoch
                created_by TEXT NOT NULL,       -- user id
                length INTEGER NOT NULL,        -- Unicode scalars
                text TEXT NOT NULL
            );
            CREATE INDEX document_versions_by_document ON document_versions (document);
            """),
        Migration(version: 11, name: "rights per document: grants and links", sql: """
            -- A document's grants to users and its links, written and read whole (DocumentAccess):
            -- JSON arrays, links with their token's SHA-256 only. Goes with its document.
            CREATE TABLE document_access (
                document TEXT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
                version INTEGER NOT NULL,       -- counts changes (a node keeps the newest it saw)
                grants TEXT NOT NULL,           -- JSON: [{user, role, grantedBy, grantedAt}]
                links TEXT NOT NULL             -- JSON: [{id, tokenHash, role, createdBy, createdAt, expiresAt, revokedAt?}]
            ) WITHOUT ROWID;
            """),
        Migration(version: 12, name: "a secret to derive keyed links' tokens", sql: """
            -- Secrets of the deployment, made here once and never changed: `document-links` is
            -- the key a keyed createDocumentLink's token is derived under (HMAC-SHA-256), so a
            -- retry gets its token again though only the token's hash is kept.
            CREATE TABLE deployment_secrets (
                name TEXT PRIMARY KEY,
                value BLOB NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO deployment_secrets (name, value) VALUES ('document-links', randomblob(32));
            """),
        Migration(version: 13, name: "a session's liveness in a narrow table of its own", sql: """
            -- What a window's arrival and departure write (a resume, a close), away from the wide
            -- session row: SQLite rewrites a whole row on UPDATE, so with these in `sessions` each
            -- resume read and wrote the session's JSON columns again. Written with its session by a
            -- whole put, and goes with it (ON DELETE CASCADE). A rowid table, rows in the order
            -- sessions were made: an update leaves the index on `session` alone, and windows that
            -- come back in about that order share pages, so a commit writes fewer of them.
            CREATE TABLE session_liveness (
                session TEXT NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE,
                last_active_at INTEGER NOT NULL,    -- milliseconds since the epoch
                live_since INTEGER,                 -- NULL while no scene is attached
                failed_restores INTEGER NOT NULL
            );
            INSERT INTO session_liveness (session, last_active_at, live_since, failed_restores)
                SELECT id, last_active_at, live_since, failed_restores FROM sessions ORDER BY rowid;
            ALTER TABLE sessions DROP COLUMN last_active_at;
            ALTER TABLE sessions DROP COLUMN live_since;
            ALTER TABLE sessions DROP COLUMN failed_restores;
            """),
        Migration(version: 14, name: "applied op ids written as an array", sql: """
            -- Since this version a document's applied op ids are written as JSON
            -- [[stream, counter, revision, at], …] (migration 7): two op-id streams that differ only
            -- in bytes are two entries, where an object could not hold both. A build before it reads
            -- an array as "nothing applied" and would apply a resent edit twice, so the version
            -- moves and such a build refuses the database (`refuseNewer`). Rows in the object form
            -- are still read and are rewritten with their document's next snapshot; the empty
            -- default becomes the empty array here.
            UPDATE document_snapshots SET applied = '[]' WHERE applied = '{}';
            """),
    ]

    /// The schema version this build writes and reads.
    static var latest: Int64 { all.last?.version ?? 0 }

    /// The database's schema version.
    static func version(of connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        try connection.integer("PRAGMA user_version") ?? 0
    }

    /// Refuses a database written by a newer build: its schema may mean things this one would
    /// misread or undo.
    static func refuseNewer(_ connection: SQLiteConnection) throws(SQLiteError) {
        let found = try version(of: connection)
        guard found <= latest else {
            throw SQLiteError(.schemaTooNew(found: found, known: latest),
                              "the database has schema version \(found), but this build knows only up to \(latest); "
                                  + "use a newer build of Panes, or another data directory",
                              path: connection.path)
        }
    }

    /// Brings the database up to `latest`, one step per transaction, so a crash between steps
    /// leaves a database at a known version that the next start continues from.
    static func migrate(_ connection: SQLiteConnection) throws {
        for (previous, migration) in zip(all, all.dropFirst()) {
            precondition(migration.version > previous.version, "migrations must be numbered in increasing order")
        }
        try refuseNewer(connection)
        for migration in all {
            try connection.transaction {
                // Read again under the write lock: another process may have migrated meanwhile.
                let current = try version(of: connection)
                guard current < migration.version else { return }
                do {
                    try migration.apply(connection)
                } catch var error as SQLiteError {
                    error.message = "migration \(migration.version) (\(migration.name)) failed: \(error.message)"
                    throw error
                }
                // user_version lives in the file header and is written in this transaction.
                try connection.execute("PRAGMA user_version = \(migration.version)")
            }
        }
    }
}
