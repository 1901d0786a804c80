// Threading: the store is used by the store thread only, like its connection. The hub never
// calls it; it hands batches to the store thread by value.
public import PanesCore
internal import PanesJSON

/// The embedded default store: one SQLite file in write-ahead-log mode.
///
/// Durability: `apply` commits each batch in one transaction, and with `synchronous=FULL` the
/// commit fsyncs the log before it returns, so an applied batch survives a killed process and
/// a power loss. JSON-typed fields are stored as JSON text written by `JSONCodec`.
///
/// `@unchecked Sendable` because it is created at start-up, handed to the store thread once,
/// and used only there after that; it holds no lock and needs none.
public final class SQLiteStore: Store, @unchecked Sendable {
    let connection: SQLiteConnection
    /// `SQL.putSessionLiveness`, prepared once and found without hashing its text: a resume
    /// runs it and nothing else (`SQLiteConnection.withStatement(in:_:_:)`).
    private var livenessStatement: OpaquePointer?
    /// Test hook (internal, for `@testable` tests): when set, the next `apply` throws after applying this many
    /// of its commands, inside the transaction, so the test can check that none of them stays.
    var failAfterCommands: Int?

    /// The database file.
    public var path: String { connection.path }
    /// Whether this store was opened by `openReadOnly(path:)` and refuses every write.
    public var isReadOnly: Bool { connection.mode == .readOnly }

    /// The connection's page cache limit, in KiB, as SQLite holds it (`cacheKiB`).
    public func cacheKiB() throws -> Int { try connection.cacheKiB() }

    /// Opens the database at `path`, creating the file (not its directory) if it is missing,
    /// and migrates it to the schema this build knows.
    /// - Parameters:
    ///   - path: the database file, e.g. `DATA/panes.sqlite`.
    ///   - synchronous: `.full` unless losing the last commits on power loss is acceptable.
    ///   - cacheKiB: the most memory SQLite keeps pages of the file in (`PRAGMA cache_size`, the
    ///     setting `sqliteCacheKiB`); pages beyond it are read again from the operating system's
    ///     file cache when needed. Nil: SQLite's own default (2,000 KiB).
    /// - Throws: `SQLiteError`, with `.schemaTooNew` for a database from a newer build, which
    ///   is left exactly as it was.
    public init(path: String, synchronous: SQLiteSynchronous = .full, cacheKiB: Int? = nil) throws {
        connection = try SQLiteConnection(path: path, mode: .readWrite(synchronous: synchronous))
        if let cacheKiB { try connection.limitCache(kiB: cacheKiB) }
        // Before anything is written: switching to WAL already changes the file header.
        try Migrations.refuseNewer(connection)
        try connection.enableWriteAheadLog()
        let before = try Migrations.version(of: connection)
        try Migrations.migrate(connection)
        // A migration may rewrite sensitive columns (migration 4 hashes plain secrets): their
        // old values must not wait in the log for the next periodic checkpoint.
        if before < Migrations.latest { try connection.checkpointTruncatingLog() }
    }

    init(readOnly connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Checkpoints (waiting for readers, unlike `checkpoint()`) and closes the database now
    /// rather than when the store is released. Later calls fail.
    public func close() {
        if !isReadOnly { _ = try? connection.checkpointTruncatingLog(wait: true) }
        connection.close()
    }

    /// Folds the write-ahead log into the database file and truncates the log to zero bytes:
    /// with `secure_delete` on, deleted rows are then gone from both files. Does not wait for
    /// a reader in the way (an inspector): the next checkpoint tries again.
    public func checkpoint() throws {
        guard !isReadOnly else { return }
        try connection.checkpointTruncatingLog(wait: false)
    }

    /// Applies every write in one transaction: when this returns all of them are on disk (but
    /// a commit whose channel moved on, which is left out and reported as a conflict), and when
    /// it throws none of them is.
    public func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
        guard !isReadOnly else {
            throw SQLiteError(.readOnly, "the store was opened read-only, for inspection", path: path)
        }
        guard !writes.isEmpty else { return [:] }
        let failAfter = failAfterCommands
        failAfterCommands = nil
        var index = 0
        func write(_ commands: [StoreCommand]) throws {
            for command in commands {
                if index == failAfter {
                    throw SQLiteError(.injectedFault, "injected failure after \(index) commands", path: path)
                }
                try self.write(command)
                index += 1
            }
        }
        return try connection.transaction {
            var outcomes: [CommitID: CommitOutcome] = [:]
            for entry in writes {
                switch entry {
                case .persist(let commands):
                    // One node: its hub holds every record of its own, so nothing is checked here.
                    try write(commands)
                case .commit(let commit):
                    // One process owns the file, so this holds unless something is wrong; checked
                    // all the same, as every store checks it.
                    guard try version(of: commit.channel) == commit.base else {
                        outcomes[commit.id] = .conflict
                        continue
                    }
                    try write(commit.commands)
                    outcomes[commit.id] = .committed
                case .signal:
                    // One node: nobody to tell.
                    break
                }
            }
            return outcomes
        }
    }

    /// A channel's current version: a domain's version (0 when none), a document's revision
    /// (-1 when there is no such document).
    private func version(of channel: Channel) throws -> Int64 {
        switch channel {
        case .preferences(let domain):
            try connection.integer(SQL.domainVersion, [.text(domain.workspace), .text(try column(for: domain))]) ?? 0
        case .document(let id):
            try connection.integer(SQL.documentRevision, [.text(id.rawValue)]) ?? -1
        case .coordination:
            // One node never commits on a cluster's channels (`CoordinationChannel`): it holds
            // every lease, orders its own drops, and writes every session itself.
            0
        }
    }

    private func write(_ command: StoreCommand) throws(SQLiteError) {
        if try writeDocument(command) { return }
        switch command {
        case .coordination:
            // A single node's store: its hub never emits these (`CoordinationCommand`), and it has
            // no lease to fence, no drop on another node to order, no other node's key to check.
            break
        case .putSession(let session):
            let values: [SQLiteValue] = [
                .text(session.id.rawValue), .text(session.owner.workspace), .text(session.owner.user),
                .text(session.secretHash.storedText), .text(session.role.rawValue), .text(session.configuration),
                .text(session.title), .text(session.snapshot.map(json)), .text(json(.object(session.userInfo))),
                .text(session.restoration.map { json($0.activity.json) }),
                .text(session.restoration.map { json($0.metadata.json) }),
                .int(session.createdAt), .text(session.subtitle),
            ]
            // Nearly every put rewrites a session its owner already has (a save, a clean start):
            // updated in place, leaving `sessions_by_owner` alone.
            if try connection.runCountingChanges(SQL.updateSessionOfItsOwner, values) == 0 {
                try connection.run(SQL.upsertSession, values)
            }
            // After the session's row, which the liveness row's foreign key needs.
            try connection.run(SQL.upsertLiveness, Self.values(of: SessionLiveness(of: session)))
        case .putSessionLiveness(let liveness):
            try writeLiveness(liveness)
        case .deleteSession(let id):
            try connection.run(SQL.deleteSession, [.text(id.rawValue)])
        case .putPreference(let domain, let keyPath, let value, let version):
            let user = try column(for: domain)
            try connection.run(SQL.bumpDomain, [.text(domain.workspace), .text(user), .int(version)])
            try connection.run(SQL.upsertPreference,
                               [.text(domain.workspace), .text(user), .text(keyPath), .text(json(value)), .int(version)])
        case .removePreference(let domain, let keyPath, let version):
            let user = try column(for: domain)
            try connection.run(SQL.bumpDomain, [.text(domain.workspace), .text(user), .int(version)])
            try connection.run(SQL.deletePreference, [.text(domain.workspace), .text(user), .text(keyPath)])
        case .recordRequest(let record):
            try writeRecord(record)
        case .forgetRequestRecords(let slots):
            try forgetRecords(slots)
        case .pruneRequestRecords(let before, let keepPerUser):
            try pruneRecords(before: before, keepPerUser: keepPerUser)
        case .enqueueWebhooks(let entries):
            do {
                try SQLiteWebhookOutbox.insert(entries, into: connection)
            } catch let error as SQLiteError {
                throw error
            } catch {
                throw SQLiteError(.invalidCommand, "webhook events could not be written: \(error)", path: path)
            }
        case .createDocument, .renameDocument, .appendOperation, .snapshotDocument, .deleteDocument, .saveVersion,
             .putDocumentAccess:
            preconditionFailure("`writeDocument` writes the documents' commands")
        }
    }

    /// All that changed since the session was stored (a resume, a close): its narrow row in
    /// `session_liveness`, not the wide one in `sessions`, which SQLite would read and write
    /// whole. Bound in place, without an array of values or a `String` of the id.
    ///
    /// One UPDATE when the row exists, as it nearly always does. When it matched none (a hand
    /// edit lost the row, which the load reports), the row is inserted from this write, if the
    /// session is stored: the session would otherwise stay without one until a whole save,
    /// read at every load as live since its creation.
    private func writeLiveness(_ liveness: SessionLiveness) throws(SQLiteError) {
        try connection.withStatement(in: &livenessStatement, SQL.putSessionLiveness) { statement throws(SQLiteError) in
            try statement.withBound(liveness.id.bytes, at: 1) { () throws(SQLiteError) in
                try statement.bind(liveness.lastActiveAt, at: 2)
                if let since = liveness.liveSince { try statement.bind(since, at: 3) } else { try statement.bindNull(at: 3) }
                try statement.bind(Int64(liveness.failedRestores), at: 4)
                while try statement.step() {}
            }
        }
        guard connection.changes == 0 else { return }
        try connection.run(SQL.insertMissingLiveness, Self.values(of: liveness))
    }

    /// A liveness row's values, in the order its statements bind them.
    private static func values(of liveness: SessionLiveness) -> [SQLiteValue] {
        [.text(liveness.id.rawValue), .int(liveness.lastActiveAt), liveness.liveSince.map { .int($0) } ?? .null,
         .int(Int64(liveness.failedRestores))]
    }

    /// Writes a command on a document; false for any other command.
    private func writeDocument(_ command: StoreCommand) throws(SQLiteError) -> Bool {
        switch command {
        case .createDocument(let record, let text):
            try connection.run(SQL.insertDocument, [
                .text(record.id.rawValue), .text(record.workspace), .text(record.title), .text(record.kind),
                .int(record.createdAt), .text(record.createdBy), .int(record.modifiedAt), .int(record.revision),
                .int(Int64(record.length)),
            ])
            try connection.run(SQL.insertSnapshot, [.text(record.id.rawValue), .int(record.revision), .text(text)])
        case .renameDocument(let id, let title):
            try connection.run(SQL.renameDocument, [.text(id.rawValue), .text(title)])
        case .appendOperation(let id, let operation, let length):
            // The insert comes first: its foreign key fails the batch for an unknown document.
            try connection.run(SQL.insertOperation, [
                .text(id.rawValue), .int(operation.revision), .text(json(operation.operation.json)),
                .text(operation.opId), .text(operation.author.scene), .text(operation.author.user),
                .text(operation.author.name), .int(operation.createdAt),
            ])
            try connection.run(SQL.advanceDocument, [
                .text(id.rawValue), .int(operation.revision), .int(Int64(length)), .int(operation.createdAt),
            ])
        case .snapshotDocument(let id, let revision, let text, let keepFrom, let applied):
            // Read out of the rope here, on the store thread, not by the hub.
            try connection.run(SQL.snapshotDocument, [.text(id.rawValue), .int(revision), .text(String(text)),
                                                      .text(json(applied.json))])
            try connection.run(SQL.pruneOperations, [.text(id.rawValue), .int(keepFrom)])
        case .deleteDocument(let id):
            // The log goes with it (ON DELETE CASCADE).
            try connection.run(SQL.deleteDocument, [.text(id.rawValue)])
        case .saveVersion(let version, let text, let keep):
            try saveVersion(version, text: text, keepCheckpoints: keep)
        case .putDocumentAccess(let id, let access):
            if access.isEmpty {
                try connection.run(SQL.deleteAccess, [.text(id.rawValue)])
            } else {
                // For an unknown document nothing is written (the SELECT finds no row).
                try connection.run(SQL.putAccess, [.text(id.rawValue), .int(access.version),
                                                   .text(json(access.grantsJSON)), .text(json(access.linksJSON))])
            }
        default:
            return false
        }
        return true
    }

    /// The `user` column for a domain: '' is the workspace domain, so an empty user name would
    /// silently merge a user's preferences into the workspace's. Refused instead.
    private func column(for domain: PreferenceDomain) throws(SQLiteError) -> String {
        guard let user = domain.user else { return "" }
        guard !user.isEmpty else {
            throw SQLiteError(.invalidCommand, "a user preference domain needs a user name; '' is the workspace domain "
                                  + "(\(domain))", path: path)
        }
        return user
    }

    private func json(_ value: JSONValue) -> String {
        JSONCodec.encodeString(value)
    }

    private enum SQL {
        /// The session's columns but its owner's, where it has that owner (no row changed when
        /// not). An upsert sets `workspace` and `user` too, and setting them, even to the values
        /// they hold, makes SQLite delete and re-insert the row's `sessions_by_owner` entry: this
        /// costs SQLite about half the upsert's work. (`RETURNING` would cost more than it saves.)
        ///
        /// `?4`, the secret hash, is NULL for a hash read from a damaged record
        /// (`SecretHash.storedText`): the text stored is kept, and a new row gets 64 `f`s.
        static let updateSessionOfItsOwner = """
            UPDATE sessions SET secret_hash = coalesce(?4, secret_hash), role = ?5, configuration = ?6, title = ?7,
                snapshot = ?8, user_info = ?9, restoration_activity = ?10, restoration_meta = ?11, created_at = ?12,
                subtitle = ?13
            WHERE id = ?1 AND workspace = ?2 AND user = ?3
            """
        static let upsertSession = """
            INSERT INTO sessions (id, workspace, user, secret_hash, role, configuration, title, snapshot, user_info,
                                  restoration_activity, restoration_meta, created_at, subtitle)
            VALUES (?1, ?2, ?3, coalesce(?4, '\(SecretHash.unmatchable.hex)'), ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
            ON CONFLICT (id) DO UPDATE SET
                workspace = excluded.workspace, user = excluded.user, secret_hash = coalesce(?4, sessions.secret_hash),
                role = excluded.role, configuration = excluded.configuration, title = excluded.title,
                snapshot = excluded.snapshot, user_info = excluded.user_info,
                restoration_activity = excluded.restoration_activity, restoration_meta = excluded.restoration_meta,
                created_at = excluded.created_at, subtitle = excluded.subtitle
            """
        /// A session's liveness beside its row (migration 13), written with every whole put.
        static let upsertLiveness = """
            INSERT INTO session_liveness (session, last_active_at, live_since, failed_restores) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (session) DO UPDATE SET last_active_at = excluded.last_active_at,
                live_since = excluded.live_since, failed_restores = excluded.failed_restores
            """
        static let domainVersion = "SELECT version FROM preference_domains WHERE workspace = ?1 AND user = ?2"
        static let documentRevision = "SELECT revision FROM documents WHERE id = ?1"
        /// Changes no key, so SQLite checks no foreign key; a session not stored has no row.
        static let putSessionLiveness = """
            UPDATE session_liveness SET last_active_at = ?2, live_since = ?3, failed_restores = ?4 WHERE session = ?1
            """
        /// After `putSessionLiveness` matched no row: the row again, for a stored session only
        /// (a session not stored inserts nothing, where a plain INSERT would fail its foreign key).
        static let insertMissingLiveness = """
            INSERT INTO session_liveness (session, last_active_at, live_since, failed_restores)
            SELECT id, ?2, ?3, ?4 FROM sessions WHERE id = ?1
            """
        /// Its liveness row goes with it (ON DELETE CASCADE, in the same statement).
        static let deleteSession = "DELETE FROM sessions WHERE id = ?1"
        static let bumpDomain = """
            INSERT INTO preference_domains (workspace, user, version) VALUES (?1, ?2, ?3)
            ON CONFLICT (workspace, user) DO UPDATE SET version = max(version, excluded.version)
            """
        static let upsertPreference = """
            INSERT INTO preferences (workspace, user, key_path, value, version) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (workspace, user, key_path) DO UPDATE SET value = excluded.value, version = excluded.version
            """
        static let deletePreference = "DELETE FROM preferences WHERE workspace = ?1 AND user = ?2 AND key_path = ?3"
        static let insertDocument = """
            INSERT INTO documents (id, workspace, title, kind, created_at, created_by, modified_at, revision, length)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """
        static let insertSnapshot = "INSERT INTO document_snapshots (document, revision, text) VALUES (?1, ?2, ?3)"
        static let renameDocument = "UPDATE documents SET title = ?2 WHERE id = ?1"
        static let insertOperation = """
            INSERT INTO document_operations (document, revision, operation, op_id, author_scene, author_user,
                                             author_name, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """
        static let advanceDocument = "UPDATE documents SET revision = ?2, length = ?3, modified_at = ?4 WHERE id = ?1"
        static let snapshotDocument = "UPDATE document_snapshots SET revision = ?2, text = ?3, applied = ?4 WHERE document = ?1"
        static let pruneOperations = "DELETE FROM document_operations WHERE document = ?1 AND revision < ?2"
        static let deleteDocument = "DELETE FROM documents WHERE id = ?1"
        static let putAccess = """
            INSERT INTO document_access (document, version, grants, links)
            SELECT id, ?2, ?3, ?4 FROM documents WHERE id = ?1
            ON CONFLICT (document) DO UPDATE SET version = excluded.version, grants = excluded.grants, links = excluded.links
            """
        static let deleteAccess = "DELETE FROM document_access WHERE document = ?1"
    }
}
