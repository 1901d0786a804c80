/// A store that keeps everything in memory: for tests and `--store memory`. Not durable.
///
/// It follows the same contract as the SQLite store, down to which commands fail a batch and
/// when a commit conflicts, so the conformance tests hold it to the same behaviour.
public final class MemoryStore: Store {
    private var sessions: [SessionID: SceneSession] = [:]
    private var preferences: [PreferenceDomain: StoredPreferences] = [:]
    private var documents: [DocumentID: StoredDocument] = [:]
    private var access: [DocumentID: DocumentAccess] = [:]
    /// The shared-store side (`SharedStore`), so two hubs on one memory store behave as two
    /// nodes on one database: who holds each session, a sequence over record writes, and
    /// each domain's change log.
    private var claims: [SessionID: SessionClaim] = [:]
    /// Sessions deleted: a session id is never used again, so a write to one (from a node
    /// that has not read the deletion yet) is dropped instead of bringing the session back.
    /// (A dictionary, as every table here, so `remember` can undo it with a failed batch.)
    private var deletedSessions: [SessionID: Bool] = [:]
    private var recordSequence: Int64 = 0
    private var recordLog: [(sequence: Int64, record: RecordKey)] = []
    private var preferenceLog: [PreferenceDomain: [PreferenceChange]] = [:]
    private var nodeLeases: [NodeID: Millis] = [:]
    /// Nodes whose liveness lock is held (their connection is up); `dropConnection` frees one.
    private var nodeLocks: Set<NodeID> = []
    /// The node whose writes `apply` makes (`fence(as:)`): refused once its lease has ended.
    private var fencingNode: NodeID?
    /// Drags that ended, with their expiry (`endDrag`).
    private var dragEnds: [Identifier: Millis] = [:]
    /// Outcomes of keyed requests (`recordRequest`), and keys nodes reserved (`reserveRequestKeys`).
    private var requestRecords: [RequestKeySlot: RequestRecord] = [:]
    private var reservations: [RequestKeySlot: Reservation] = [:]
    /// Each document's versions, oldest first, with their texts (`saveVersion`).
    private var versions: [DocumentID: [(record: VersionRecord, text: String)]] = [:]

    private struct Reservation {
        let node: NodeID
        let at: Millis
    }
    /// Signals sent through this store, in commit order, for tests to deliver.
    public private(set) var signals: [NodeSignal] = []
    /// The clock `heartbeat` measures leases with; tests move it.
    public var now: () -> Millis = { Millis(0) }
    private enum RecordKey: Hashable {
        case session(SessionID)
        case document(DocumentID)
    }
    /// Set to make the next `apply` fail, to test how the hub handles a failing store.
    public var failNextApply = false
    /// Set to make the next `loadDocument` fail, to test how the hub answers a failed load.
    public var failNextLoad = false
    /// Undo records of the transaction in progress: what to put back if it fails. Restoring
    /// only what a batch touched keeps a transaction's cost that of its writes.
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
        try apply(writes, resolvingConflicts: { _, _ in nil })
    }

    public func apply(_ writes: [StoreWrite], resolvingConflicts resolve: (Commit, [StoredOperation]) -> Commit?) throws
        -> [CommitID: CommitOutcome] {
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
                    let reports = commands.compactMap { if case .recordKeyedRequest(_, _, let report?) = $0 { report } else { nil } }
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
                            outcomes[commit.id] = .failed("a request key it records is reserved by another node's attempt")
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
            throw error
        }
        undo.removeAll()
        if !batchWebhooks.isEmpty {
            webhookOutbox.insert(batchWebhooks)
            batchWebhooks.removeAll()
        }
        return outcomes
    }

    /// What stands in the way of the request records these commands write: records of their
    /// keys, and whether another node reserved one.
    private func keyConflicts(in commands: [StoreCommand]) -> (records: [RequestRecord], heldElsewhere: Bool) {
        var found: [RequestRecord] = []
        var heldElsewhere = false
        for command in commands {
            // A single node's record replaces a stale one; only a cluster node's is checked.
            guard case .recordKeyedRequest(let record, let node, _) = command else { continue }
            let slot = record.slot
            if let record = requestRecords[slot] { found.append(record) }
            if let reservation = reservations[slot], reservation.node != node { heldElsewhere = true }
        }
        return (found, heldElsewhere)
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
        case .session(let id): claims[id]?.epoch ?? 0
        case .drag(let id): dragEnds[id] == nil ? 0 : 1
        case .sessionRecord(let id): sessions[id]?.revision ?? -1
        }
    }

    private func apply(_ command: StoreCommand) throws {
        switch command {
        case .enqueueWebhooks(let entries):
            batchWebhooks += entries
        case .putSession(let session):
            if deletedSessions[session.id] != nil { return }
            // A write from an older copy than the one stored is dropped (see `revision`).
            if session.revision > 0, let stored = sessions[session.id], stored.revision >= session.revision { return }
            remember(session.id, in: \.sessions)
            sessions[session.id] = session
            logRecord(.session(session.id))
        case .deleteSession(let id):
            remember(id, in: \.sessions)
            remember(id, in: \.claims)
            remember(id, in: \.deletedSessions)
            sessions[id] = nil
            claims[id] = nil
            deletedSessions[id] = true
            logRecord(.session(id))
        case .claimSession(let id, let claim):
            if deletedSessions[id] != nil { return }
            remember(id, in: \.claims)
            claims[id] = claim
            logRecord(.session(id))
        case .endDrag(let id, let expiresAt):
            for (ended, expiry) in dragEnds where expiry < expiresAt - DragEnd.keptMs {
                remember(ended, in: \.dragEnds)
                dragEnds[ended] = nil
            }
            remember(Identifier(id), in: \.dragEnds)
            dragEnds[id] = expiresAt
        case .putPreference(let domain, let keyPath, let value, let version):
            remember(domain, in: \.preferenceLog)
            preferenceLog[domain, default: []].append(PreferenceChange(keyPath: keyPath, value: value, version: version))
            remember(domain, in: \.preferences)
            preferences[domain, default: StoredPreferences()].values[keyPath] = VersionedValue(value: value, version: version)
            preferences[domain]!.version = max(preferences[domain]!.version, version)
        case .removePreference(let domain, let keyPath, let version):
            remember(domain, in: \.preferenceLog)
            preferenceLog[domain, default: []].append(PreferenceChange(keyPath: keyPath, value: nil, version: version))
            remember(domain, in: \.preferences)
            preferences[domain, default: StoredPreferences()].values[keyPath] = nil
            preferences[domain]!.version = max(preferences[domain]!.version, version)
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
            remember(id, in: \.documents)
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
        case .recordRequest(let record), .recordKeyedRequest(let record, _, _):
            remember(record.slot, in: \.requestRecords)
            remember(record.slot, in: \.reservations)
            requestRecords[record.slot] = record
            reservations[record.slot] = nil
        case .releaseRequestKey(let slot, let node):
            guard reservations[slot]?.node == node else { return }
            remember(slot, in: \.reservations)
            reservations[slot] = nil
        case .forgetRequestRecords(let keys):
            for key in keys where requestRecords[key.slot].map({ $0.at <= key.at }) == true {
                remember(key.slot, in: \.requestRecords)
                requestRecords[key.slot] = nil
            }
        case .pruneRequestRecords(let before, let keepPerUser):
            for (slot, reservation) in reservations where reservation.at < before {
                remember(slot, in: \.reservations)
                reservations[slot] = nil
            }
            var byOwner: [OwnerKey: [RequestRecord]] = [:]
            for record in requestRecords.values { byOwner[record.slot.owner, default: []].append(record) }
            for records in byOwner.values {
                let newestFirst = records.sorted { $0.at > $1.at }
                for (index, record) in newestFirst.enumerated() where record.at < before || index >= keepPerUser {
                    remember(record.slot, in: \.requestRecords)
                    requestRecords[record.slot] = nil
                }
            }
        }
    }

    /// Numbers a write to a single-writer record, as a shared database's sequence would.
    private func logRecord(_ key: RecordKey) {
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
    private func remember<Key: Hashable, Value>(_ key: Key, in table: ReferenceWritableKeyPath<MemoryStore, [Key: Value]>) {
        let before = self[keyPath: table][key]
        undo.append { [unowned self] in self[keyPath: table][key] = before }
    }
}

extension MemoryStore: SharedStore {
    public func loadRecordChanges(after cursor: Int64) throws -> RecordChanges {
        var changes = RecordChanges(cursor: recordSequence)
        var seen: Set<RecordKey> = []
        // Newest first, so each record is reported once, as it is now; then back to oldest first.
        for entry in recordLog.reversed() where entry.sequence > cursor {
            switch entry.record {
            case .session(let id):
                guard seen.insert(entry.record).inserted else { continue }
                if let session = sessions[id] {
                    changes.sessions.append(session)
                    changes.claims[id] = claims[id] ?? SessionClaim(node: nil, epoch: 0)
                } else {
                    changes.deletedSessions.append(id)
                }
            case .document(let id):
                guard seen.insert(entry.record).inserted else { continue }
                if let document = documents[id] {
                    changes.documents.append(document.record)
                    changes.access[id] = access[id] ?? DocumentAccess()
                } else {
                    changes.deletedDocuments.append(id)
                }
            }
        }
        changes.sessions.reverse()
        changes.deletedSessions.reverse()
        changes.documents.reverse()
        changes.deletedDocuments.reverse()
        return changes
    }

    public func loadPreferenceChanges(_ domain: PreferenceDomain, after version: Int64) throws -> [PreferenceChange]? {
        (preferenceLog[domain] ?? []).filter { $0.version > version }
    }

    public func loadOperations(_ id: DocumentID, after revision: Int64) throws -> [StoredOperation]? {
        guard let document = documents[id] else { return nil }
        guard revision >= document.record.revision
                || document.operations.first.map({ $0.revision <= revision + 1 }) == true else { return nil }
        return document.operations.filter { $0.revision > revision }
    }

    public func reserveRequestKeys(_ keys: [KeyReservation], node: NodeID, staleBefore: Millis) throws
        -> [RequestKeySlot: KeyReservationOutcome] {
        var outcomes: [RequestKeySlot: KeyReservationOutcome] = [:]
        for key in keys {
            if let record = requestRecords[key.slot] {
                outcomes[key.slot] = .recorded(record)
            } else if let held = reservations[key.slot], held.node != node, held.at >= staleBefore,
                      let lease = nodeLeases[held.node], lease >= now() {
                let holder = held.node
                outcomes[key.slot] = .reservedElsewhere(holder)
            } else {
                // Free, this node's already, or a dead node's: this node's now.
                reservations[key.slot] = Reservation(node: node, at: key.at)
                outcomes[key.slot] = .reserved
            }
        }
        return outcomes
    }

    public func loadRecords(sessions: [SessionID], documents: [DocumentID]) throws -> RecordsRead {
        var read = RecordsRead()
        for id in sessions {
            if let session = self.sessions[id] { read.sessions[id] = session } else { read.missingSessions.append(id) }
        }
        for id in documents {
            if let document = self.documents[id] { read.documents[id] = document.record } else { read.missingDocuments.append(id) }
        }
        return read
    }

    public func register(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        let now = now()
        nodeLeases[node] = now + Millis(leaseMs)
        nodeLocks.insert(node)
        return try checkNodes(node: node, leaseMs: leaseMs)
    }

    public func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        let now = now()
        guard let until = nodeLeases[node], until >= now else {
            // Ended, by another node or by the clock: it stays ended (`SharedStore.heartbeat`).
            if nodeLeases[node] != nil { nodeLeases[node] = -1 }
            throw NodeRevoked(node: node)
        }
        nodeLeases[node] = now + Millis(leaseMs)
        nodeLocks.insert(node)
        return try checkNodes(node: node, leaseMs: leaseMs)
    }

    /// Ends the lease of every other node whose lease ran out or whose lock is free, and
    /// returns the nodes whose lease has ended. (One thread: no transaction of a fenced node
    /// can be under way meanwhile, which PostgreSQL orders with a row lock.)
    public func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        let now = now()
        for (other, until) in nodeLeases where other != node && until >= 0 && (until < now || !nodeLocks.contains(other)) {
            nodeLeases[other] = -1
        }
        return nodeLeases.filter { $0.key != node && $0.value < 0 }.map(\.key).sorted()
    }

    public func liveNodeCount() throws -> Int { max(1, nodeLeases.values.count { $0 >= now() }) }

    public func fence(as node: NodeID?, leaseMs: Int) {
        fencingNode = node
    }

    /// Test hook: the node's connection to the store dropped (its process was killed), so its
    /// liveness lock is free.
    public func dropConnection(of node: NodeID) {
        nodeLocks.remove(node)
    }
}

public enum MemoryStoreError: Error {
    case injectedFailure
    /// `createDocument` for an id that is taken (SQLite: a primary key conflict).
    case documentExists(DocumentID)
    /// `appendOperation` for a document that is not stored (SQLite: a foreign key failure).
    case noSuchDocument(DocumentID)
    /// `appendOperation` at a revision already logged (SQLite: a primary key conflict).
    case revisionExists(DocumentID, Int64)
}
