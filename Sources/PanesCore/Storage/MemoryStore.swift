/// A store that keeps everything in memory: for tests and `--store memory`. Not durable.
///
/// It follows the same contract as the SQLite store, down to which commands fail a batch and
/// when a commit conflicts, so the conformance tests hold it to the same behaviour.
///
/// Its tables are internal rather than private only so that its `SharedStore` side
/// (`MemoryStore+Shared.swift`) reads them; nothing else in PanesCore holds a `MemoryStore`.
public final class MemoryStore: Store {
    var sessions: [SessionID: SceneSession] = [:]
    private var preferences: [PreferenceDomain: StoredPreferences] = [:]
    var documents: [DocumentID: StoredDocument] = [:]
    var access: [DocumentID: DocumentAccess] = [:]
    /// The shared-store side (`SharedStore`), so two hubs on one memory store behave as two
    /// nodes on one database: who holds each session, a sequence over record writes, and
    /// each domain's change log.
    var claims: [SessionID: SessionClaim] = [:]
    /// Sessions deleted: a session id is never used again, so a write to one (from a node
    /// that has not read the deletion yet) is dropped instead of bringing the session back.
    /// (A dictionary, as every table here, so `remember` can undo it with a failed batch.)
    var deletedSessions: [SessionID: Bool] = [:]
    var recordSequence: Int64 = 0
    var recordLog: [(sequence: Int64, record: RecordKey)] = []
    var preferenceLog: [PreferenceDomain: [PreferenceChange]] = [:]
    var nodeLeases: [NodeID: Millis] = [:]
    /// Nodes whose liveness lock is held (their connection is up); `dropConnection` frees one.
    var nodeLocks: Set<NodeID> = []
    /// Nodes whose row a transaction of theirs holds (`holdRow(of:)`): `checkNodes` ends no lease of theirs.
    var rowsHeld: Set<NodeID> = []
    /// The node whose writes `apply` makes (`fence(as:)`): refused once its lease has ended.
    var fencingNode: NodeID?
    /// Drags that ended, with their expiry (`endDrag`).
    var dragEnds: [Identifier: Millis] = [:]
    /// Drops onto a window on another node that were settled (`settleDrop`), with the drag's expiry.
    var settledDrops: [Identifier: Millis] = [:]
    /// Drops' `itemsDropped` held for windows' sessions (`holdDrop`), until sent.
    var heldDrops: [HeldDrop.Key: HeldDrop] = [:]
    /// Sessions a claim of the `apply` under way found drops held for: returned with its
    /// outcomes (`AppliedWrites.heldDropsFound`), empty between applies.
    var sessionsWithHeldDrops: [SessionID] = []
    /// Outcomes of keyed requests (`recordRequest`), and keys nodes reserved (`reserveRequestKeys`).
    var requestRecords: [RequestKeySlot: RequestRecord] = [:]
    var reservations: [RequestKeySlot: Reservation] = [:]
    /// Each document's versions, oldest first, with their texts (`saveVersion`).
    private var versions: [DocumentID: [(record: VersionRecord, text: String)]] = [:]

    /// Signals sent through this store, in commit order, for tests to deliver.
    public private(set) var signals: [NodeSignal] = []
    /// The clock `heartbeat` measures leases with; tests move it.
    public var now: () -> Millis = { Millis(0) }
    enum RecordKey: Hashable {
        case session(SessionID)
        case document(DocumentID)
    }
    /// Set to make the next `apply` fail, to test how the hub handles a failing store.
    public var failNextApply = false
    /// Set to make the next `loadDocument` fail, to test how the hub answers a failed load.
    public var failNextLoad = false
    /// Undo records of the transaction in progress: what to put back if it fails. Restoring
    /// only what a batch touched keeps a transaction's cost that of its writes; an append to a
    /// log is undone by dropping that entry, never by a copy of the log (see `setPreference`).
    private var undo: [() -> Void] = []
    /// Where `enqueueWebhooks` writes: the delivery engine of `--store memory` reads it.
    public let webhookOutbox = MemoryWebhookOutbox()
    /// Webhook entries of the batch being applied, written to the outbox once it all applied.
    private var batchWebhooks: [WebhookOutboxEntry] = []

    /// Made once, like the migration that makes a database's (`StoredState.linkSecret`).
    private let linkSecret: [UInt8] = {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }()

    public init() {}

    /// Everything stored, sessions sorted by id as the SQLite store returns them (byte order,
    /// which is SQLite's), so both stores hand the hub the same state.
    public func loadState() throws -> StoredState {
        StoredState(
            sessions: sessions.values.sorted { $0.id < $1.id },
            preferences: preferences,
            documents: documents.values.map(\.record).sorted { $0.id < $1.id },
            recordCursor: recordSequence, claims: claims,
            requestRecords: requestRecords.values.sorted { ($0.at, $0.slot.key.hex) < ($1.at, $1.slot.key.hex) },
            access: access, linkSecret: linkSecret)
    }

    public func loadRequestRecords(_ slots: [RequestKeySlot]) throws -> [RequestRecord] {
        slots.compactMap { requestRecords[$0] }
    }

    public func loadDocument(_ id: DocumentID, retention: Int) throws -> StoredDocument? {
        if failNextLoad {
            failNextLoad = false
            throw MemoryStoreError.injectedFailure
        }
        guard var document = documents[id] else { return nil }
        let after = document.snapshotRevision - Int64(retention)
        document.operations.removeAll { $0.revision <= after }
        return document
    }

    public func loadVersions(_ document: DocumentID) throws -> [VersionRecord] {
        (versions[document] ?? []).reversed().map(\.record)
    }

    public func loadVersion(_ document: DocumentID, id: String) throws -> (VersionRecord, String)? {
        // By bytes: version ids come from clients.
        (versions[document] ?? []).first { $0.record.id.utf8.elementsEqual(id.utf8) }.map { ($0.record, $0.text) }
    }

    public func loadPreferences(_ domain: PreferenceDomain) throws -> StoredPreferences? {
        preferences[domain]
    }

    public func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
        try apply(writes, resolvingConflicts: { _, _ in nil }).outcomes
    }

    public func apply(_ writes: [StoreWrite], resolvingConflicts resolve: (Commit, [StoredOperation]) -> Commit?) throws
        -> AppliedWrites {
        sessionsWithHeldDrops.removeAll()
        if failNextApply {
            failNextApply = false
            throw MemoryStoreError.injectedFailure
        }
        if let fencingNode, (nodeLeases[fencingNode] ?? -1) < now() { throw NodeRevoked(node: fencingNode) }
        undo.removeAll()
        var outcomes: [CommitID: CommitOutcome] = [:]
        var resolved: Set<Channel> = []
        do {
            for write in writes {
                switch write {
                case .persist(let commands):
                    // Another attempt of the same keyed request was applied first (or another
                    // node's attempt holds the key): not again.
                    let (found, heldElsewhere) = keyConflicts(in: commands)
                    let reports = commands.compactMap(\.keyedReport)
                    guard found.isEmpty && !heldElsewhere else {
                        for report in reports { outcomes[report] = .recorded(found) }
                        continue
                    }
                    for command in commands { try apply(command) }
                    for report in reports { outcomes[report] = .committed }
                case .commit(let commit):
                    var next: Commit? = commit
                    while let commit = next {
                        next = nil
                        let (found, heldElsewhere) = keyConflicts(in: commit.commands)
                        guard found.isEmpty else {
                            outcomes[commit.id] = .recorded(found)
                            continue
                        }
                        guard !heldElsewhere else {
                            outcomes[commit.id] = .failed("a request key it records is reserved by another node's attempt, or no longer by the node it is written for")
                            continue
                        }
                        guard version(of: commit.channel) == commit.base else {
                            let outcome = conflict(on: commit)
                            outcomes[commit.id] = outcome
                            if case .behind(let operations) = outcome, resolved.insert(commit.channel).inserted {
                                next = resolve(commit, operations)
                                precondition(next.map { $0.channel == commit.channel } ?? true,
                                             "a conflict is resolved on its own channel")
                            }
                            continue
                        }
                        for command in commit.commands { try apply(command) }
                        outcomes[commit.id] = .committed
                    }
                case .signal(let signal):
                    let count = signals.count
                    undo.append { [unowned self] in signals.removeLast(signals.count - count) }
                    signals.append(signal)
                }
            }
        } catch {
            for restore in undo.reversed() { restore() }
            undo.removeAll()
            batchWebhooks.removeAll()
            sessionsWithHeldDrops.removeAll()
            throw error
        }
        undo.removeAll()
        if !batchWebhooks.isEmpty {
            webhookOutbox.insert(batchWebhooks)
            batchWebhooks.removeAll()
        }
        defer { sessionsWithHeldDrops.removeAll() }
        return AppliedWrites(outcomes: outcomes, heldDropsFound: sessionsWithHeldDrops)
    }

    /// A conflict on a document carries the operations after the commit's base, as a shared
    /// store answers it (`CommitOutcome.behind`), when the log still reaches back to it.
    private func conflict(on commit: Commit) -> CommitOutcome {
        guard case .document(let id) = commit.channel, let document = documents[id], commit.base >= 0,
              document.record.revision > commit.base,
              let operations = try? loadOperations(id, after: commit.base),
              operations.first?.revision == commit.base + 1,
              operations.count == Int(document.record.revision - commit.base) else { return .conflict }
        return .behind(operations)
    }

    /// A channel's current version, as a commit's base is checked against.
    private func version(of channel: Channel) -> Int64 {
        switch channel {
        case .preferences(let domain): preferences[domain]?.version ?? 0
        case .document(let id): documents[id]?.record.revision ?? -1
        case .coordination(let channel): version(of: channel)
        }
    }

    private func apply(_ command: StoreCommand) throws {
        switch command {
        case .enqueueWebhooks(let entries):
            batchWebhooks += entries
        case .putSession, .deleteSession:
            applyToRecords(command)
        case .putSessionLiveness(let liveness):
            // Those fields alone, of a session held (`StoreCommand`); its revision unchanged.
            guard sessions[liveness.id] != nil else { return }
            remember(liveness.id, in: \.sessions)
            sessions[liveness.id]!.take(liveness)
            logRecord(.session(liveness.id))
        case .coordination(let command):
            apply(command)
        case .putPreference, .removePreference:
            applyToPreferences(command)
        case .createDocument, .renameDocument, .appendOperation, .snapshotDocument, .deleteDocument, .putDocumentAccess,
             .saveVersion:
            try applyToDocuments(command)
        case .recordRequest, .forgetRequestRecords, .pruneRequestRecords:
            applyToRequestKeys(command)
        }
    }

    /// Sessions.
    private func applyToRecords(_ command: StoreCommand) {
        switch command {
        case .putSession(let session):
            if deletedSessions[session.id] != nil { return }
            // A write from an older copy than the one stored is dropped (see `revision`).
            if session.revision > 0, let stored = sessions[session.id], stored.revision >= session.revision { return }
            remember(session.id, in: \.sessions)
            var session = session
            // An unmatchable hash keeps the one held, as the SQL stores keep their text
            // (`StoreCommand.putSession`).
            if session.secretHash == .unmatchable, let held = sessions[session.id] {
                session.secretHash = held.secretHash
            }
            sessions[session.id] = session
            logRecord(.session(session.id))
        case .deleteSession(let id):
            remember(id, in: \.sessions)
            remember(id, in: \.claims)
            remember(id, in: \.deletedSessions)
            sessions[id] = nil
            claims[id] = nil
            deletedSessions[id] = true
            forgetHeldDrops(of: id)
            logRecord(.session(id))
        default:
            break
        }
    }

    /// Preference values and each domain's change log.
    private func applyToPreferences(_ command: StoreCommand) {
        switch command {
        case .putPreference(let domain, let keyPath, let value, let version):
            setPreference(keyPath, value, version: version, in: domain)
        case .removePreference(let domain, let keyPath, let version):
            setPreference(keyPath, nil, version: version, in: domain)
        default:
            break
        }
    }

    /// Writes one key of a domain (nil removes it) and appends the change to the domain's log.
    /// Its undo record keeps the key's old value and the domain's version, and drops the log's
    /// last entry; it holds neither the domain nor the log: a record holding either would share
    /// its storage, so the write after it would copy all of it, and every write would cost the
    /// domain's size plus the log's length.
    private func setPreference(_ keyPath: String, _ value: JSONValue?, version: Int64, in domain: PreferenceDomain) {
        let before = preferences[domain].map { (value: $0.values[keyPath], version: $0.version) }
        let logged = preferenceLog[domain] != nil
        undo.append { [unowned self] in
            if logged { preferenceLog[domain]?.removeLast() } else { preferenceLog[domain] = nil }
            if let before {
                preferences[domain]?.values[keyPath] = before.value
                preferences[domain]?.version = before.version
            } else {
                preferences[domain] = nil
            }
        }
        preferenceLog[domain, default: []].append(PreferenceChange(keyPath: keyPath, value: value, version: version))
        preferences[domain, default: StoredPreferences()].values[keyPath] = value.map { VersionedValue(value: $0, version: version) }
        preferences[domain]!.version = max(preferences[domain]!.version, version)
    }

    /// Documents, their logs and snapshots, versions and access.
    private func applyToDocuments(_ command: StoreCommand) throws {
        switch command {
        case .createDocument(let record, let text):
            guard documents[record.id] == nil else { throw MemoryStoreError.documentExists(record.id) }
            remember(record.id, in: \.documents)
            documents[record.id] = StoredDocument(record: record, snapshotRevision: record.revision,
                                                  snapshotText: text, operations: [])
            logRecord(.document(record.id))
        case .renameDocument(let id, let title):
            remember(id, in: \.documents)
            documents[id]?.record.title = title
            logRecord(.document(id))
        case .appendOperation(let id, let operation, let length):
            guard documents[id] != nil else { throw MemoryStoreError.noSuchDocument(id) }
            guard documents[id]!.operations.last.map({ $0.revision < operation.revision }) ?? true,
                  !documents[id]!.operations.contains(where: { $0.revision == operation.revision })
            else {
                throw MemoryStoreError.revisionExists(id, operation.revision)
            }
            // Undone by dropping the entry, not by keeping the whole log (see `setPreference`).
            let record = documents[id]!.record
            undo.append { [unowned self] in
                documents[id]?.operations.removeLast()
                documents[id]?.record = record
            }
            documents[id]!.operations.append(operation)
            documents[id]!.record.revision = operation.revision
            documents[id]!.record.length = length
            documents[id]!.record.modifiedAt = operation.createdAt
        case .snapshotDocument(let id, let revision, let text, let keepFrom, let applied):
            guard documents[id] != nil else { return }
            remember(id, in: \.documents)
            documents[id]!.snapshotRevision = revision
            documents[id]!.snapshotText = String(text)
            documents[id]!.applied = applied
            documents[id]!.operations.removeAll { $0.revision < keepFrom }
        case .deleteDocument(let id):
            remember(id, in: \.documents)
            remember(id, in: \.versions)
            documents[id] = nil
            versions[id] = nil
            remember(id, in: \.access)
            access[id] = nil
            logRecord(.document(id))
        case .putDocumentAccess(let id, let new):
            guard documents[id] != nil else { return }
            remember(id, in: \.access)
            access[id] = new.isEmpty ? nil : new
            logRecord(.document(id))
        case .saveVersion(let record, let text, let keep):
            guard documents[record.document] != nil else { return }
            remember(record.document, in: \.versions)
            versions[record.document, default: []].append((record, String(text)))
            if record.kind == .checkpoint {
                let checkpoints = versions[record.document]!.filter { $0.record.kind == .checkpoint }
                let dropped = Set(checkpoints.dropLast(keep).map(\.record.id))
                versions[record.document]!.removeAll { dropped.contains($0.record.id) }
            }
        default:
            break
        }
    }

    /// Numbers a write to a single-writer record, as a shared database's sequence would.
    func logRecord(_ key: RecordKey) {
        let sequence = recordSequence
        let length = recordLog.count
        undo.append { [unowned self] in
            recordSequence = sequence
            recordLog.removeLast(recordLog.count - length)
        }
        recordSequence += 1
        recordLog.append((recordSequence, key))
    }

    /// Records the entry's value before the transaction changes it.
    func remember<Key: Hashable, Value>(_ key: Key, in table: ReferenceWritableKeyPath<MemoryStore, [Key: Value]>) {
        let before = self[keyPath: table][key]
        undo.append { [unowned self] in self[keyPath: table][key] = before }
    }
}
