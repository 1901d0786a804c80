// Threading: each instance is used by one thread only, with its one connection: the store
// thread's, and in a cluster a second instance on the heartbeat's thread (`ClusterNode`), which
// uses only its lease calls. The hub hands batches by value. Other nodes reach the same database
// with their own.
public import PanesCore
internal import PanesJSON
import Foundation

/// The store several nodes share: PostgreSQL.
///
/// `apply` runs a whole batch in one transaction (group commit): when it returns, every
/// persist and every commit reported `.committed` is durable in PostgreSQL (with the server's
/// `fsync` and `synchronous_commit` on, its defaults). Compare-and-set: before anything is
/// written, the transaction takes an advisory transaction lock per channel the batch commits
/// to, in a fixed order, then reads each channel's version; so of two nodes racing on one
/// channel, exactly one sees its base and commits, and the other waits for it and then sees
/// the new version: `.conflict`. A database error throws, and nothing of the batch stays.
///
/// In the same transaction each write advances what other nodes follow: the record sequence
/// (`record_versions`, for sessions, claims and document records), the preference change log,
/// and a `NOTIFY panes` per transaction naming the channels it moved (`ChangeNoticePayload`),
/// delivered by PostgreSQL at commit, in commit order.
///
/// After a lost connection the next call reconnects; the call that met the loss throws, but
/// for a loss during COMMIT, which is resolved on a new connection with `txid_status`: a
/// batch that did commit is reported applied, so it is never retried into duplicates.
///
/// `@unchecked Sendable` because it is created at start-up, handed to the store thread once,
/// and used only there after that.
public final class PostgresStore: SharedStore, @unchecked Sendable {
    let connection: PostgresConnection
    public let settings: PostgresSettings
    /// Test hook (`@_spi(Testing)`): when set, the next `apply` throws after applying this many
    /// of its commands, inside the transaction, so the test can check that none of them stays.
    @_spi(Testing) public var failAfterCommands: Int?
    /// Test hook (`@_spi(Testing)`): called inside every `apply`'s transaction once its fence has
    /// passed, just before its COMMIT, so a test can hold a transaction open.
    @_spi(Testing) public var beforeCommit: (() -> Void)?
    /// The server process each transaction left unknown ran on (so `resolve` can end it if it
    /// still holds the transaction open) and the marker it wrote.
    private var unknownTransactions: [Int64: (backend: Int32?, marker: String?)] = [:]

    /// The advisory lock that orders record sequence numbers by commit.
    static let recordsLock = "panes:records"

    /// Below which revision this store's committed prunes have deleted each document's log,
    /// so that the next prune starts there (`snapshotDocument`). Store thread only.
    private(set) var prunedBelow: [DocumentID: Int64] = [:]

    /// The backend whose session holds the liveness locks of `lockedNodes` (`heartbeat`): a
    /// new connection (another backend) holds none until it takes them again.
    var lockedBackend: Int32 = 0
    var lockedNodes: Set<NodeID> = []
    /// The node whose writes `apply` makes (`fence(as:leaseMs:)`), checked in each transaction.
    var fencingNode: NodeID?
    /// Wakes a wait on the heartbeat's connection (`awaitHeartbeatConnection`) from another thread.
    let wake = WakeSignal()

    /// Connects to the database at `url` and migrates it to the schema this build knows.
    /// - Parameters:
    ///   - url: `postgres://user:password@host:port/database`, with optional `panes_…`
    ///     settings in its query (`PostgresSettings`).
    public init(url: String) throws {
        let (libpqURL, settings) = try PostgresSettings.split(url)
        self.settings = settings
        connection = try PostgresConnection(url: libpqURL)
        try PostgresMigrations.migrate(connection)
        connection.commitMarker = .init(write: WriteSQL.writeMarker, find: WriteSQL.findMarker)
    }

    /// Closes the connection now rather than when the store is released.
    public func close() {
        connection.close()
    }

    /// Applies every write in one transaction; see the type's documentation.
    public func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
        try apply(writes, resolvingConflicts: { _, _ in nil })
    }

    /// Applies every write in one transaction, a conflict on a document resolved while its
    /// lock is held (`SharedStore.apply(_:resolvingConflicts:)`).
    public func apply(_ writes: [StoreWrite], resolvingConflicts resolve: (Commit, [StoredOperation]) -> Commit?) throws
        -> [CommitID: CommitOutcome] {
        guard !writes.isEmpty else { return [:] }
        let failAfter = failAfterCommands
        failAfterCommands = nil
        let fencing = fencingNode
        // What the commits came to, kept out here for a COMMIT whose answer is lost.
        var decided: [CommitID: CommitOutcome] = [:]
        let (outcomes, pruned): ([CommitID: CommitOutcome], [DocumentID: Int64])
        do {
            (outcomes, pruned) = try connection.transaction(resolvesLostCommit: true) {
            // Inside: the transaction starts again when its first round trip finds the connection lost.
            var batch = Batch(failAfter: failAfter)
            // First, before any other lock: a transaction waiting for its fence holds none that
            // a node ending this node's lease could be waiting for.
            let fence = FenceCheck()
            if let fencing { try sendFence(fencing, fence) }
            try lockChannels(of: writes)
            let keys = KeysFound()
            let slots = Self.recordedSlots(writes)
            if !slots.isEmpty { try sendKeyCheck(slots, into: keys) }
            var epochs = try sessionEpochs(of: writes)
            var outcomes: [CommitID: CommitOutcome] = [:]
            var resolved: Set<Channel> = []
            for write in writes {
                switch write {
                case .persist(let commands):
                    // Another attempt of the same keyed request was applied first (or another
                    // node's attempt holds the key): not again, and the writer is told.
                    let (found, heldElsewhere) = try keys.conflicts(in: commands, connection)
                    let reports = commands.compactMap { if case .recordKeyedRequest(_, _, let report?) = $0 { report } else { nil } }
                    guard found.isEmpty && !heldElsewhere else {
                        for report in reports { outcomes[report] = .recorded(found) }
                        continue
                    }
                    Self.forgetEpochs(touchedBy: commands, in: &epochs)
                    try self.write(commands, &batch)
                    for report in reports { outcomes[report] = .committed }
                case .commit(let first):
                    var next: Commit? = first
                    // A retry's base is checked against the version its conflict read (the lock is held).
                    var known: Int64?
                    while let commit = next {
                        next = nil
                        var missed: PostgresRows?
                        if known == nil, case .document(let id) = commit.channel, commit.base >= 0 {
                            // Read with the version, in its round trip: of two nodes editing one
                            // document, most commits find the other's operations there.
                            try sendOperationsRead(id, after: commit.base) { missed = $0 }
                        }
                        let version = try known ?? epochs.removeValue(forKey: commit.channel) ?? version(of: commit.channel)
                        known = nil
                        let (recorded, heldElsewhere) = try keys.conflicts(in: commit.commands, connection)
                        guard recorded.isEmpty else {
                            outcomes[commit.id] = .recorded(recorded)
                            continue
                        }
                        guard !heldElsewhere else {
                            outcomes[commit.id] = .failed("a request key it records is reserved by another node's attempt")
                            continue
                        }
                        guard version == commit.base else {
                            let outcome = try conflict(on: commit, at: version, missed: missed)
                            outcomes[commit.id] = outcome
                            if case .behind(let operations) = outcome, resolved.insert(commit.channel).inserted {
                                // The channel's lock is held (taken up front): the retry's base holds.
                                next = resolve(commit, operations)
                                known = version
                                if let retry = next, retry.channel != commit.channel {
                                    throw PostgresError(.invalidRequest, "a conflict on \(commit.channel) was resolved "
                                                            + "on \(retry.channel), whose lock is not held")
                                }
                            }
                            continue
                        }
                        Self.forgetEpochs(touchedBy: commit.commands, in: &epochs)
                        try self.write(commit.commands, &batch)
                        outcomes[commit.id] = .committed
                        batch.moved(commit.channel, to: commit.base)
                    }
                case .signal(let signal):
                    batch.signals.append(try item(for: signal))
                }
            }
            // The record numbers the writes took go in the notice: their answers first.
            if batch.cursor.unanswered > 0 { try connection.answer() }
            if let fencing { try checkFence(fencing, fence) }
            beforeCommit?()
            for payload in ChangeNoticePayload.encode(items: batch.notices.map(ChangeNoticePayload.Item.notice) + batch.signals) {
                try connection.notifyAtCommit("panes", payload)
            }
            decided = outcomes
            return (outcomes, batch.pruned)
            }
        } catch let error as PostgresError where error.kind == .outcomeUnknown {
            // Nobody may retry these writes nor call them failed until `resolve` knows.
            guard let transaction = error.transactionID else { throw error }
            unknownTransactions[transaction] = (error.backendPID, error.marker)
            throw CommitOutcomeUnknown(transaction: transaction, outcomes: decided, reason: "\(error)")
        }
        notePruned(pruned)
        return outcomes
    }

    /// Whether a transaction whose COMMIT went unanswered committed: asked on a new connection
    /// (`PostgresConnection.transactionStatus`). Throws while the database cannot be reached,
    /// or cannot tell yet.
    public func resolve(_ unknown: CommitOutcomeUnknown) throws -> Bool {
        let known = unknownTransactions[unknown.transaction]
        let committed = try connection.transactionStatus(unknown.transaction, backend: known?.backend ?? nil,
                                                         marker: known?.marker ?? nil)
        unknownTransactions[unknown.transaction] = nil
        return committed
    }

    /// Notes where committed prunes stopped. Documents deleted through other nodes leave
    /// entries behind: past a bound they are all forgotten (the next prune of each then starts
    /// from the beginning of its log, once).
    private func notePruned(_ pruned: [DocumentID: Int64]) {
        guard !pruned.isEmpty else { return }
        if prunedBelow.count >= 10_000 { prunedBelow = [:] }
        prunedBelow.merge(pruned) { max($0, $1) }
    }

    /// Locks every channel the batch commits to, in one order for all nodes (so two batches
    /// never wait on each other in a cycle), and the record sequence last when the batch
    /// writes records. The locks go with the transaction. Channel names are identifiers, kept
    /// and sorted by their bytes: two users whose names are canonically equivalent have two
    /// domains, and so two locks.
    private func lockChannels(of writes: [StoreWrite]) throws {
        var keys: Set<Identifier> = []
        var writesRecords = false
        for write in writes {
            let commands: [StoreCommand]
            switch write {
            case .persist(let persisted): commands = persisted
            case .commit(let commit):
                keys.insert(Identifier(commit.channel.description))
                commands = commit.commands
            case .signal:
                continue
            }
            if !writesRecords { writesRecords = commands.contains(where: \.writesRecord) }
            for command in commands { if let (slot, _) = Self.keyWrite(command) { keys.insert(Identifier(Self.keyLock(slot))) } }
            // A deletion takes the document's lock: an append (which checks under it that the
            // document is there) is then wholly before it, its log deleted with it, or after it,
            // and finds no document.
            for case .deleteDocument(let id) in commands { keys.insert(Identifier(Channel.document(id).description)) }
        }
        var ordered = keys.sorted().map(\.rawValue)
        if writesRecords { ordered.append(Self.recordsLock) }
        guard !ordered.isEmpty else { return }
        // One statement for them all; the aggregate takes the locks in the array's order.
        try connection.send(WriteSQL.lock, [.text(Self.arrayLiteral(ordered))])
    }

    /// The claim epochs of the sessions two or more of the batch's commits compare-and-set
    /// (claims: a failover's takeovers, a reconnect storm's resumes), read in one statement
    /// rather than one round trip per commit. Read after the channels' locks (queued behind
    /// them), so nothing else can move them; empty for fewer, which read their own.
    private func sessionEpochs(of writes: [StoreWrite]) throws -> [Channel: Int64] {
        var sessions: [String] = []
        for case .commit(let commit) in writes { if case .session(let id) = commit.channel { sessions.append(id.rawValue) } }
        guard sessions.count > 1 else { return [:] }
        let rows = try connection.query(WriteSQL.sessionEpochs, [.text(Self.arrayLiteral(sessions))])
        // No row: never claimed, epoch 0 (as `version(of:)` reads it).
        var epochs = Dictionary(sessions.map { (Channel.session(SessionID($0)), Int64(0)) }) { first, _ in first }
        for row in 0..<rows.count { epochs[.session(SessionID(rows.text(row, 0) ?? ""))] = rows.int64(row, 1) }
        return epochs
    }

    /// Drops the epochs read ahead of the sessions whose claim `commands` write: a later
    /// commit of one of them reads its epoch again.
    private static func forgetEpochs(touchedBy commands: [StoreCommand], in epochs: inout [Channel: Int64]) {
        guard !epochs.isEmpty else { return }
        for command in commands {
            switch command {
            case .claimSession(let id, _), .deleteSession(let id): epochs[.session(id)] = nil
            default: continue
            }
        }
    }

    /// `{"a","b"}`: a text[] literal, sent as text and cast by the statement.
    ///
    /// Built byte by byte: every operation of a busy document's commit goes through here (its
    /// JSON is full of quotes), on the store thread while the document's lock is held, and
    /// Foundation's `replacingOccurrences` made this a seventh of a node's CPU (measured with
    /// `perf` on two nodes editing one document).
    static func arrayLiteral(_ elements: [String]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(2 + elements.reduce(0) { $0 + $1.utf8.count + 3 })
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            for byte in element.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A channel's current version: a domain's version (0 when none), a document's revision
    /// (-1 when there is no such document), a session's lease epoch (0 when never claimed).
    func version(of channel: Channel) throws -> Int64 {
        switch channel {
        case .preferences(let domain):
            try connection.integer(WriteSQL.domainVersion, [.text(domain.workspace), .text(try column(for: domain))]) ?? 0
        case .document(let id):
            try connection.integer(WriteSQL.documentRevision, [.text(id.rawValue)]) ?? -1
        case .session(let id):
            try connection.integer(WriteSQL.sessionEpoch, [.text(id.rawValue)]) ?? 0
        case .drag(let id):
            try connection.integer(WriteSQL.dragEnded, [.text(id.rawValue)]) ?? 0
        case .sessionRecord(let id):
            // The row stays locked to the commit: no other write of it can slip in between.
            try connection.integer(WriteSQL.sessionRevision, [.text(id.rawValue)]) ?? -1
        }
    }

    /// A conflict on a document, answered with the operations committed after the commit's
    /// base (`CommitOutcome.behind`): read under the channel's lock, so nothing can slip in
    /// between, and saving the node a read of its own before it retries.
    /// - Parameter missed: the operations after the base, when read with the version.
    private func conflict(on commit: Commit, at version: Int64, missed: PostgresRows?) throws -> CommitOutcome {
        guard case .document(let id) = commit.channel, commit.base >= 0, version > commit.base else { return .conflict }
        let operations = try missed.map { try self.operations(id, from: $0) } ?? self.operations(id, after: commit.base)
        // Compacted past the base: the node's ordinary catch-up decides (a snapshot).
        guard operations.first?.revision == commit.base + 1, operations.count == Int(version - commit.base) else {
            return .conflict
        }
        return .behind(operations)
    }

    /// Writes commands in order; a run of operations appended to one document goes as one
    /// statement (a busy document's batch is many of them: one round trip, not one each).
    private func write(_ commands: [StoreCommand], _ batch: inout Batch) throws {
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
        switch command {
        case .putSession(let session):
            // Sent ahead like every write (a switcher refresh writes dozens of sessions at once);
            // its record number arrives with the next round trip.
            let cursor = batch.cursor
            cursor.unanswered += 1
            try connection.send(WriteSQL.upsertSession, [
                .text(session.id.rawValue), .text(session.owner.workspace), .text(session.owner.user),
                .text(session.secretHash), .text(session.role.rawValue), .text(session.configuration),
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
            try record("session", id.rawValue, deleted: true, &batch)
        case .claimSession(let id, let claim):
            try connection.send(WriteSQL.upsertClaim, [.text(id.rawValue), claim.node.map { .text($0.rawValue) } ?? .null,
                                                   .int(claim.epoch)])
            try record("session", id.rawValue, deleted: false, &batch)
            batch.moved(.session(id), to: claim.epoch)
        case .endDrag(let id, let expiresAt):
            try connection.send(WriteSQL.pruneDragEnds, [.int(expiresAt - DragEnd.keptMs)])
            try connection.send(WriteSQL.endDrag, [.text(id), .int(expiresAt)])
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
        case .recordRequest(let record):
            try writeRecord(record, node: nil)
        case .recordKeyedRequest(let record, let node, _):
            try writeRecord(record, node: node)
        case .releaseRequestKey(let slot, let node):
            try releaseKey(slot, node: node)
        case .forgetRequestRecords(let slots):
            try forgetRecords(slots)
        case .pruneRequestRecords(let before, let keepPerUser):
            try pruneRecords(before: before, keepPerUser: keepPerUser)
        case .enqueueWebhooks(let entries):
            try PostgresWebhookOutbox.insert(entries, on: connection)
        }
    }

    /// A signal as its payload carries it: inline, or stored and referenced when too large
    /// for a NOTIFY payload.
    private func item(for signal: NodeSignal) throws -> ChangeNoticePayload.Item {
        let text = json(signal.json)
        guard text.utf8.count > ChangeNoticePayload.maxInlineSignalBytes else { return .notice(.signal(signal)) }
        return .storedSignal(try connection.integer(WriteSQL.storeSignal, [.text(text)]) ?? 0)
    }

    /// Advances the record sequence for one record (under `recordsLock`, taken up front).
    private func record(_ kind: String, _ id: String, deleted: Bool, _ batch: inout Batch) throws {
        let cursor = batch.cursor
        cursor.unanswered += 1
        try connection.send(WriteSQL.recordVersion, [.text(kind), .text(id), .int(deleted ? 1 : 0)]) { rows in
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
    private struct Batch {
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
        /// Each document whose log the batch pruned: below which (`prunedBelow`, once committed).
        var pruned: [DocumentID: Int64] = [:]

        init(failAfter: Int?) { self.failAfter = failAfter }

        mutating func moved(_ channel: Channel, to version: Int64) {
            // A drag's ending wakes nobody: the winner tells every node (`dragEnded`).
            if case .drag = channel { return }
            // A session record's write advances the record cursor, which is what nodes follow.
            if case .sessionRecord = channel { return }
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

    /// A batch's record cursor, a class so that the answers of writes sent ahead can fill it in.
    private final class RecordCursor {
        private(set) var value: Int64?
        /// Writes sent whose answer has not arrived yet.
        var unanswered = 0

        func advance(to sequence: Int64?) {
            value = max(value ?? 0, sequence ?? 0)
        }
    }

    private enum WriteSQL {
        /// A transaction's own mark, for finding out after a lost COMMIT whether it committed.
        static let writeMarker = "INSERT INTO commit_markers (marker, created_at) VALUES ($1, \(nowMs))"
        static let findMarker = "SELECT count(*)::bigint FROM commit_markers WHERE marker = $1"
        static let lock = "SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))::bigint FROM unnest($1::text[]) AS k"
        static let storeSignal = """
            INSERT INTO node_signals (payload, created_at) VALUES ($1, \(nowMs))
            RETURNING id
            """
        static let nowMs = "(extract(epoch FROM now()) * 1000)::bigint"
        static let domainVersion = "SELECT version FROM preference_domains WHERE workspace = $1 AND user_name = $2"
        static let documentRevision = "SELECT revision FROM documents WHERE id = $1"
        static let sessionEpoch = "SELECT epoch FROM session_claims WHERE session = $1"
        static let sessionEpochs = "SELECT session, epoch FROM session_claims WHERE session = ANY($1::text[])"
        static let dragEnded = "SELECT 1::bigint FROM drag_ends WHERE drag = $1"
        static let sessionRevision = "SELECT revision FROM sessions WHERE id = $1 FOR UPDATE"
        static let endDrag = "INSERT INTO drag_ends (drag, expires_at) VALUES ($1, $2) ON CONFLICT (drag) DO NOTHING"
        static let pruneDragEnds = "DELETE FROM drag_ends WHERE expires_at < $1"
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
        /// Upserts the session and advances its record in one round trip.
        static let upsertSession = """
            WITH session AS (
                INSERT INTO sessions (id, workspace, user_name, secret_hash, role, configuration, title, snapshot,
                                      user_info, restoration_activity, restoration_meta, created_at, last_active_at,
                                      failed_restores, live_since, subtitle, revision)
                SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text,
                       $10::text, $11::text, $12::bigint, $13::bigint, $14::bigint, $15::bigint, $16::text, $17::bigint
                WHERE NOT EXISTS (\(deletedSession))
                ON CONFLICT (id) DO UPDATE SET
                    workspace = excluded.workspace, user_name = excluded.user_name, secret_hash = excluded.secret_hash,
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

extension StoreCommand {
    /// Whether the command advances the record sequence (a write to a single-writer record).
    var writesRecord: Bool {
        switch self {
        case .putSession, .deleteSession, .claimSession, .createDocument, .renameDocument, .deleteDocument,
             .putDocumentAccess: true
        case .putPreference, .removePreference, .appendOperation, .snapshotDocument, .endDrag, .recordRequest,
             .recordKeyedRequest, .releaseRequestKey, .forgetRequestRecords, .pruneRequestRecords, .saveVersion,
             .enqueueWebhooks: false
        }
    }
}
