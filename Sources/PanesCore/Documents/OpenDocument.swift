/// A document held in memory because some scene has it open: its text, its recent log, who
/// is in it. Evicted as soon as no scene has it open; its record stays in `DocumentState`.
///
/// The log in memory is exactly what the store keeps (see `compact`), so every revision the
/// store could serve for catch-up is served from here, and nothing older is held.
///
/// Cost: the text is a `Rope` and the log an `OperationLog`, so copying a document is O(1) and
/// applying an operation of k components to it (or to a copy) is O(k log n) plus a bounded
/// piece of the log: nothing is proportional to the document's length. Only `String(text)`
/// (an open reply) and the store's writing a snapshot read the whole text.
struct OpenDocument: Sendable {
    let id: DocumentID
    private(set) var text: Rope
    /// `text`'s length in scalars, O(1).
    var length: Int { text.scalarCount }
    private(set) var revision: Int64
    /// The revision of the store's latest snapshot.
    private(set) var snapshotRevision: Int64
    /// The encoded size of the operations applied since that snapshot (`TextOperation.encodedSize`).
    private(set) var bytesSinceSnapshot = 0
    /// Logged operations, oldest first and contiguous: `log[i].revision == log[0].revision + i`.
    private(set) var log: OperationLog
    /// The kept size of `log` (`Self.keptSize`), for `operationLogRetentionBytes`.
    private(set) var logBytes = 0
    /// Client operations applied before the log's start (`AppliedStreams`).
    private(set) var applied: AppliedStreams
    var participants: [SceneID: DocumentParticipant] = [:]
    /// Counts openings, for `DocumentParticipant.joined`.
    var joins = 0

    /// Rebuilds the current text from the store's snapshot and log.
    /// - Throws: `.internalError` when the stored operations do not fit the snapshot.
    init(_ stored: StoredDocument) throws(PanesError) {
        id = stored.record.id
        applied = stored.applied
        var text = Rope(stored.snapshotText)
        var revision = stored.snapshotRevision
        for entry in stored.operations where entry.revision > stored.snapshotRevision {
            guard entry.revision == revision + 1 else {
                throw PanesError(.internalError, "document \(id) is missing operation \(revision + 1) in the store")
            }
            do throws(PanesError) {
                text = try entry.operation.apply(to: text)
            } catch {
                throw PanesError(.internalError, "document \(id) cannot be rebuilt at revision \(entry.revision): "
                                     + error.message)
            }
            revision = entry.revision
            bytesSinceSnapshot += entry.operation.encodedSize
        }
        self.text = text
        self.revision = revision
        self.snapshotRevision = stored.snapshotRevision
        // Keep only the contiguous run that ends at the current revision.
        var log = stored.operations[...]
        if let gap = log.indices.last(where: { $0 > 0 && log[$0].revision != log[$0 - 1].revision + 1 }) {
            log = log[gap...]
        }
        // A log that stops short of the text cannot transform anything safely: catch-ups then
        // get the whole text instead.
        if log.last?.revision != revision { log = [] }
        self.log = OperationLog(log)
        logBytes = log.reduce(0) { $0 + Self.keptSize($1) }
    }

    /// What one logged operation counts towards `operationLogRetentionBytes`: its encoded
    /// operation, op id and author, as the store keeps them.
    static func keptSize(_ entry: StoredOperation) -> Int {
        entry.operation.encodedSize + keptOverhead(entry)
    }

    /// `keptSize` without the operation: its op id, author and fixed columns.
    static func keptOverhead(_ entry: StoredOperation) -> Int {
        entry.opId.utf8.count + entry.author.scene.utf8.count + entry.author.user.utf8.count
            + entry.author.name.utf8.count + 16
    }

    /// Of `opIds` (a re-opening window's unacknowledged edits), those the kept log holds: the
    /// server applied them. Read only for a catch-up by snapshot, so a whole walk is fine.
    func appliedOpIds(_ opIds: [String]) -> [String] {
        guard !opIds.isEmpty else { return [] }
        let wanted = Set(opIds.map { Identifier($0) })
        var found = Set<Identifier>()
        for entry in log where wanted.contains(Identifier(entry.opId)) { found.insert(Identifier(entry.opId)) }
        return opIds.filter { id in found.contains(Identifier(id)) || applied.applied(id) }
    }

    /// The oldest revision an operation may be based on: the log reaches back to it.
    var oldestBase: Int64 { log.first.map { $0.revision - 1 } ?? revision }

    /// The logged operations after `base`, oldest first. `base` must be in `oldestBase...revision`.
    func operations(after base: Int64) -> OperationLog.SubSequence {
        guard let first = log.first, base < revision else { return log[log.endIndex...] }
        return log[Int(base + 1 - first.revision)...]
    }

    /// The revision an operation with this client op id was applied as, if that was after
    /// `base`: a resend of it. The newest such operation wins (ids repeat after a reload).
    /// Looks only at the operations after `base`, which `rebase` walks anyway.
    func appliedRevision(of opId: String, after base: Int64) -> Int64? {
        for entry in log.reversed() {
            guard entry.revision > base else { break }
            if entry.opId == opId { return entry.revision }
        }
        return nil
    }

    /// The document's length at `base`, a revision in `oldestBase...revision`.
    func length(at base: Int64) -> Int {
        operations(after: base).first?.operation.baseLength ?? length
    }

    /// Checks that `base` is a revision the log can work from.
    /// - Throws: `.revisionInFuture` or `.revisionUnavailable`.
    func checkBase(_ base: Int64, field: String = "revision") throws(PanesError) {
        guard base <= revision else {
            throw PanesError(.revisionInFuture, "revision \(base) is newer than the document's \(revision); re-open it",
                             field: field)
        }
        guard base >= oldestBase else {
            throw PanesError(.revisionUnavailable, "revision \(base) is older than the kept log, which reaches back to "
                                 + "\(oldestBase) (setting `operationLogRetention`); re-open the document",
                             field: field)
        }
    }

    /// `operation`, made on `base`, rewritten to apply to the current text: transformed past
    /// every operation accepted since, with the incoming one first on ties (see
    /// `TextOperation.transform`).
    /// - Throws: `.revisionInFuture`, `.revisionUnavailable`, `.invalidOperation`.
    func rebase(_ operation: TextOperation, from base: Int64) throws(PanesError) -> TextOperation {
        try checkBase(base)
        let expected = length(at: base)
        guard operation.baseLength == expected else {
            throw PanesError(.invalidOperation, "the operation spans \(operation.baseLength) Unicode scalars but the "
                                 + "document had \(expected) at revision \(base)", field: "operation")
        }
        var rebased = operation
        for entry in operations(after: base) {
            rebased = try rebased.transformed(past: entry.operation)
        }
        return rebased
    }

    /// Applies an operation that fits the current text and logs it. Returns the log entry.
    /// Selections are moved separately (`moveSelections`), once the operation is committed.
    mutating func apply(_ operation: TextOperation, opId: String, author: DocumentAuthor,
                        at time: Millis) throws(PanesError) -> StoredOperation {
        text = try operation.apply(to: text)
        revision += 1
        let size = operation.encodedSize
        bytesSinceSnapshot += size
        let entry = StoredOperation(revision: revision, operation: operation, opId: opId, author: author, createdAt: time)
        log.append(entry)
        logBytes += size + Self.keptOverhead(entry)
        return entry
    }

    /// Moves every shared selection through an applied operation.
    mutating func moveSelections(through operation: TextOperation, authorScene: SceneID) {
        for (scene, participant) in participants {
            guard let selection = participant.selection else { continue }
            participants[scene]!.selection = selection.transformed(by: operation, isOwnEdit: scene == authorScene)
        }
    }

    /// Takes the text and log of `other`, a copy of this document that a committed batch was
    /// applied to; keeps this document's participants, which may have changed meanwhile. The
    /// rope and the log share their storage with the copy, so this costs nothing per byte.
    mutating func adoptText(of other: OpenDocument) {
        text = other.text
        revision = other.revision
        snapshotRevision = other.snapshotRevision
        bytesSinceSnapshot = other.bytesSinceSnapshot
        log = other.log
        logBytes = other.logBytes
        applied = other.applied
    }

    /// How long a document's log is kept: the newest `count` operations behind a snapshot
    /// always, and older ones while younger than `ageMs` and while the kept log is at most
    /// `bytes` (`operationLogRetention`, `…Ms`, `…Bytes`).
    struct Retention: Sendable {
        var count: Int
        var ageMs: Int
        var bytes: Int
        /// How long, and for how many streams, op ids are remembered past the log.
        var idAgeMs: Int
        var idStreams: Int

        init(count: Int, ageMs: Int = 0, bytes: Int = 0, idAgeMs: Int = 0, idStreams: Int = 0) {
            self.count = count
            self.ageMs = ageMs
            self.bytes = bytes
            self.idAgeMs = idAgeMs
            self.idStreams = idStreams
        }

        init(_ settings: Settings) {
            self.init(count: settings.operationLogRetention, ageMs: settings.operationLogRetentionMs,
                      bytes: settings.operationLogRetentionBytes, idAgeMs: settings.operationIdRetentionMs,
                      idStreams: settings.operationIdRetentionStreams)
        }

        /// How many operations behind its snapshot a document's load reads: with an age, every
        /// row the store still has (compaction pruned them by this same retention).
        var loadCount: Int { ageMs > 0 && bytes > 0 ? Int(Int32.max) : count }
    }

    /// When the operations applied since revision `start` (a batch's) took the revision past a
    /// multiple of `snapshotEvery`, or the operations since the last snapshot add up to
    /// `snapshotEveryBytes`: takes a snapshot and forgets the log the retention no longer
    /// keeps, returning the store command that does the same on disk. The command holds the
    /// rope, not a string: the store thread reads the text out, so the hub never copies it.
    ///
    /// Why multiples of the revision rather than a count since this node's last snapshot: each
    /// revision is committed by exactly one batch, so of several nodes editing one document
    /// exactly one takes each snapshot. Counted per node, every node took its own, and each
    /// rewrites the whole text (two nodes on a hot document at ~4,800 revisions a second and the
    /// old default of 100: about 100 whole-text writes a second, under the document's lock).
    mutating func compact(since start: Int64, snapshotEvery: Int, snapshotEveryBytes: Int, retention: Retention,
                          now: Millis) -> StoreCommand? {
        let every = Int64(snapshotEvery)
        guard revision / every > start / every || bytesSinceSnapshot >= snapshotEveryBytes else { return nil }
        snapshotRevision = revision
        bytesSinceSnapshot = 0
        let keepFrom = keptFrom(retention, now: now)
        if let first = log.first, first.revision < keepFrom {
            let dropped = min(log.count, Int(keepFrom - first.revision))
            for entry in log.prefix(dropped) {
                logBytes -= Self.keptSize(entry)
                if retention.idStreams > 0 { applied.fold(entry) }
            }
            log.removeFirst(dropped)
        }
        applied.prune(olderThan: now - Millis(retention.idAgeMs), limit: retention.idStreams)
        return .snapshotDocument(id, revision: revision, text: text, keepFrom: keepFrom, applied: applied)
    }

    /// The oldest revision the retention keeps. Walks only the entries that go (and one more),
    /// so each operation is looked at about once in its life.
    func keptFrom(_ retention: Retention, now: Millis) -> Int64 {
        let byCount = revision - Int64(retention.count) + 1
        guard retention.ageMs > 0, let first = log.first, first.revision < byCount else { return byCount }
        let cutoff = now - Millis(retention.ageMs)
        var bytes = logBytes
        var keepFrom = first.revision
        for entry in log {
            guard entry.revision < byCount, entry.createdAt < cutoff || bytes > retention.bytes else { break }
            bytes -= Self.keptSize(entry)
            keepFrom = entry.revision + 1
        }
        return keepFrom
    }

    /// The switcher's snapshot of the document: its first scalars.
    var preview: JSONValue {
        ["text": .string(text.prefix(Self.previewScalars))]
    }

    static let previewScalars = 120

    /// Participants in the order they opened the document.
    /// The participants' connections but `connection` (the one the news came from), in order:
    /// whom an edit's or a presence's event goes to. Told apart by connection, a number, rather
    /// than by scene id, a string compared by its bytes, once per participant per edit.
    func connections(except connection: ConnectionID) -> [ConnectionID] {
        var connections: [ConnectionID] = []
        connections.reserveCapacity(participants.count)
        for participant in participants.values where participant.connection != connection {
            connections.append(participant.connection)
        }
        connections.sort()
        return connections
    }

    var orderedParticipants: [DocumentParticipant] {
        participants.values.sorted { $0.joined < $1.joined }
    }
}
