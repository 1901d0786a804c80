// Threading: each instance is used by one thread only, with its one connection: the store
// thread's, and in a cluster a second instance on the heartbeat's thread, inside the lease-only
// handle `PostgresLeases` (`ClusterNode`). The hub hands batches by value. Other nodes reach the same database
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
    /// Starts every `NOTIFY panes` payload this store sends, so that its node's listener
    /// (`PostgresListener(ownOrigin:)`) can drop them unread: 64 random bits, hex, new for each
    /// instance. Only a hint, as the payloads are: a payload claiming another store's origin
    /// hides only itself from that store's node.
    public let noticeOrigin = ChangeNoticePayload.newOrigin()
    /// Test hook (internal, for `@testable` tests): when set, the next `apply` throws after applying this many
    /// of its commands, inside the transaction, so the test can check that none of them stays.
    var failAfterCommands: Int?
    /// Test hook (internal, for `@testable` tests): called inside every `apply`'s transaction once its fence has
    /// passed, just before its COMMIT, so a test can hold a transaction open.
    var beforeCommit: (() -> Void)?
    /// The server process each transaction left unknown ran on (so `resolve` can end it if it
    /// still holds the transaction open) and the marker it wrote.
    private var unknownTransactions: [Int64: (backend: Int32?, marker: String?)] = [:]
    /// What node checks did to end lapsed nodes' leases since the heartbeat last asked
    /// (`takeLeaseEndingNotes`).
    var leaseEndingNotes: [LeaseEndingNote] = []

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
    public convenience init(url: String) throws {
        try self.init(url: url, migrating: true)
    }

    /// - Parameter migrating: false for a handle that only keeps leases (`PostgresLeases`),
    ///   opened after the node's store migrated the database.
    init(url: String, migrating: Bool) throws {
        let (libpqURL, settings) = try PostgresSettings.split(url)
        self.settings = settings
        connection = try PostgresConnection(url: libpqURL)
        if migrating { try PostgresMigrations.migrate(connection) }
        connection.commitMarker = .init(write: WriteSQL.writeMarker, find: WriteSQL.findMarker)
    }

    /// Closes the connection now rather than when the store is released.
    public func close() {
        connection.close()
    }

    /// Applies every write in one transaction; see the type's documentation.
    public func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
        try apply(writes, resolvingConflicts: { _, _ in nil }).outcomes
    }

    /// Applies every write in one transaction, a conflict on a document resolved while its
    /// lock is held (`SharedStore.apply(_:resolvingConflicts:)`).
    public func apply(_ writes: [StoreWrite], resolvingConflicts resolve: (Commit, [StoredOperation]) -> Commit?) throws
        -> AppliedWrites {
        guard !writes.isEmpty else { return AppliedWrites() }
        let failAfter = failAfterCommands
        failAfterCommands = nil
        let fencing = fencingNode
        // What the commits came to, kept out here for a COMMIT whose answer is lost.
        var decided: [CommitID: CommitOutcome] = [:]
        var decidedFound: [SessionID] = []
        let (outcomes, pruned, found): ([CommitID: CommitOutcome], [DocumentID: Int64], [SessionID])
        do {
            (outcomes, pruned, found) = try connection.transaction(resolvesLostCommit: true) {
            // Inside: the transaction starts again when its first round trip finds the connection lost.
            // First, before any other lock: a transaction waiting for its fence holds none that
            // a node ending this node's lease could be waiting for.
            let fence = FenceCheck()
            if let fencing { try sendFence(fencing, fence) }
            try lockChannels(of: writes)
            let keys = KeysFound()
            let slots = Self.recordedSlots(writes)
            if !slots.isEmpty { try sendKeyCheck(slots, into: keys) }
            var pass = Pass(keys: keys, epochs: try sessionEpochs(of: writes), batch: Batch(failAfter: failAfter))
            for write in writes {
                switch write {
                case .persist(let commands):
                    try persist(commands, &pass)
                case .commit(let first):
                    try commit(first, &pass, resolve)
                case .signal(let signal):
                    guard try isWritten(signal, &pass) else { continue }
                    pass.batch.signals.append(try item(for: signal))
                }
            }
            let (outcomes, batch) = (pass.outcomes, pass.batch)
            // The record numbers the writes took go in the notice: their answers first.
            if batch.cursor.unanswered > 0 { try connection.answer() }
            if let fencing { try checkFence(fencing, fence) }
            beforeCommit?()
            for payload in ChangeNoticePayload.encode(items: batch.notices.map(ChangeNoticePayload.Item.notice) + batch.signals,
                                                          origin: noticeOrigin) {
                try connection.notifyAtCommit("panes", payload)
            }
            // Every claim's answer is in (`answer()` above): what they found is final too.
            (decided, decidedFound) = (outcomes, batch.heldDropsFound.sessions)
            return (outcomes, batch.pruned, batch.heldDropsFound.sessions)
            }
        } catch let error as PostgresError where error.kind == .outcomeUnknown {
            // Nobody may retry these writes nor call them failed until `resolve` knows.
            guard let transaction = error.transactionID else { throw error }
            unknownTransactions[transaction] = (error.backendPID, error.marker)
            throw CommitOutcomeUnknown(transaction: transaction, outcomes: decided, heldDropsFound: decidedFound,
                                       reason: "\(error)")
        }
        notePruned(pruned)
        return AppliedWrites(outcomes: outcomes, heldDropsFound: found)
    }

    /// What one transaction of `apply` has found and done so far.
    struct Pass {
        let keys: KeysFound
        /// Sessions' claim epochs read up front, until a write of the batch changes one.
        var epochs: [Channel: Int64]
        var batch: Batch
        var outcomes: [CommitID: CommitOutcome] = [:]
        /// Channels whose conflict was resolved already (at most once per call).
        var resolved: Set<Channel> = []
        /// Whether another node's lease ran when first asked in this transaction (`isWritten`).
        var othersLive: Bool?
    }

    /// Whether a signal is written. One its sender tells again to any node that asks
    /// (`NodeSignal.isRetoldWhenAsked`) is written only while another node's lease runs, asked
    /// once per transaction: a node whose registration commits after that asks once it is
    /// registered, later than the change this signal told, and is told it then. In a failover
    /// storm the surviving node alone otherwise stored a list of up to 100 scenes per user every
    /// `sceneShareIntervalMs` for nobody (7,300 rows, 40 % of PostgreSQL's time in the storm).
    private func isWritten(_ signal: NodeSignal, _ pass: inout Pass) throws -> Bool {
        guard signal.isRetoldWhenAsked else { return true }
        if pass.othersLive == nil {
            pass.othersLive = try connection.integer(WriteSQL.otherLeaseRuns, [.text(signal.from.rawValue)]) != nil
        }
        return pass.othersLive == true
    }

    /// Writes a persist, unless a request key it records was recorded already.
    private func persist(_ commands: [StoreCommand], _ pass: inout Pass) throws {
        // Another attempt of the same keyed request was applied first (or another
        // node's attempt holds the key): not again, and the writer is told.
        try refreshHeldKeys(in: commands, pass.keys)
        let (found, heldElsewhere) = try pass.keys.conflicts(in: commands, connection)
        let reports = commands.compactMap(\.keyedReport)
        guard found.isEmpty && !heldElsewhere else {
            for report in reports { pass.outcomes[report] = .recorded(found) }
            return
        }
        Self.forgetEpochs(touchedBy: commands, in: &pass.epochs)
        try self.write(commands, &pass.batch)
        for report in reports { pass.outcomes[report] = .committed }
    }

    /// Writes a commit if its channel is still at its base; a conflict is resolved (at most
    /// once per channel) while the channel's lock is held, and the retry written in its place.
    private func commit(_ first: Commit, _ pass: inout Pass,
                    _ resolve: (Commit, [StoredOperation]) -> Commit?) throws {
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
            let version = try known ?? pass.epochs.removeValue(forKey: commit.channel) ?? version(of: commit.channel)
            known = nil
            try refreshHeldKeys(in: commit.commands, pass.keys)
            let (recorded, heldElsewhere) = try pass.keys.conflicts(in: commit.commands, connection)
            guard recorded.isEmpty else {
                pass.outcomes[commit.id] = .recorded(recorded)
                continue
            }
            guard !heldElsewhere else {
                pass.outcomes[commit.id] = .failed("a request key it records is reserved by another node's attempt, or no longer by the node it is written for")
                continue
            }
            guard version == commit.base else {
                let outcome = try conflict(on: commit, at: version, missed: missed)
                pass.outcomes[commit.id] = outcome
                if case .behind(let operations) = outcome, pass.resolved.insert(commit.channel).inserted {
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
            Self.forgetEpochs(touchedBy: commit.commands, in: &pass.epochs)
            try self.write(commit.commands, &pass.batch)
            pass.outcomes[commit.id] = .committed
            pass.batch.moved(commit.channel, to: commit.base)
        }
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
            for command in commands { if let write = Self.keyWrite(command) { keys.insert(Identifier(Self.keyLock(write.slot))) } }
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
        for case .commit(let commit) in writes { if case .coordination(.session(let id)) = commit.channel { sessions.append(id.rawValue) } }
        guard sessions.count > 1 else { return [:] }
        let rows = try connection.query(WriteSQL.sessionEpochs, [.text(Self.arrayLiteral(sessions))])
        // No row: never claimed, epoch 0 (as `version(of:)` reads it).
        var epochs = Dictionary(sessions.map { (Channel.coordination(.session(SessionID($0))), Int64(0)) }) { first, _ in first }
        for row in 0..<rows.count { epochs[.coordination(.session(SessionID(rows.text(row, 0) ?? "")))] = rows.int64(row, 1) }
        return epochs
    }

    /// Drops the epochs read ahead of the sessions whose claim `commands` write: a later
    /// commit of one of them reads its epoch again.
    private static func forgetEpochs(touchedBy commands: [StoreCommand], in epochs: inout [Channel: Int64]) {
        guard !epochs.isEmpty else { return }
        for command in commands {
            switch command {
            case .coordination(.claimSession(let id, _)), .deleteSession(let id): epochs[.coordination(.session(id))] = nil
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
    /// (-1 when there is no such document), a coordination channel's (`version(of:)` below).
    func version(of channel: Channel) throws -> Int64 {
        switch channel {
        case .preferences(let domain):
            try connection.integer(WriteSQL.domainVersion, [.text(domain.workspace), .text(try column(for: domain))]) ?? 0
        case .document(let id):
            try connection.integer(WriteSQL.documentRevision, [.text(id.rawValue)]) ?? -1
        case .coordination(let channel):
            try version(of: channel)
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

}

extension StoreCommand {
    /// Whether the command advances the record sequence (a write to a single-writer record).
    var writesRecord: Bool {
        switch self {
        case .putSession, .putSessionLiveness, .deleteSession, .coordination(.claimSession), .createDocument, .renameDocument,
             .deleteDocument, .putDocumentAccess: true
        case .putPreference, .removePreference, .appendOperation, .snapshotDocument, .coordination(.endDrag), .coordination(.settleDrop),
             .recordRequest, .coordination(.recordKeyedRequest), .coordination(.recordHeldRequest),
             .coordination(.releaseRequestKey), .coordination(.holdDrop), .coordination(.releaseDrop),
             .coordination(.pruneHeldDrops),
             .forgetRequestRecords, .pruneRequestRecords, .saveVersion, .enqueueWebhooks: false
        }
    }
}
