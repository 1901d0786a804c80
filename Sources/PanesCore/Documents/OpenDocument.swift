/// A document held in memory because some scene has it open: its text, its recent log, who
/// is in it. Evicted as soon as no scene has it open; its record stays in `DocumentState`.
///
/// The log in memory is exactly what the store keeps (see `compact`), so every revision the
/// store could serve for catch-up is served from here, and nothing older is held.
struct OpenDocument: Sendable {
    let id: DocumentID
    private(set) var text: String
    /// `text`'s length in scalars, kept so it is never counted again.
    private(set) var length: Int
    private(set) var revision: Int64
    /// The revision of the store's latest snapshot.
    private(set) var snapshotRevision: Int64
    /// Logged operations, oldest first and contiguous: `log[i].revision == log[0].revision + i`.
    private(set) var log: [StoredOperation]
    /// Client op id to the revision it was applied as, for every logged operation.
    private(set) var applied: [String: Int64] = [:]
    var participants: [SceneID: DocumentParticipant] = [:]
    /// Counts openings, for `DocumentParticipant.joined`.
    var joins = 0

    /// Rebuilds the current text from the store's snapshot and log.
    /// - Throws: `.internalError` when the stored operations do not fit the snapshot.
    init(_ stored: StoredDocument) throws(PanesError) {
        id = stored.record.id
        var text = stored.snapshotText
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
        }
        self.text = text
        self.length = text.unicodeScalars.count
        self.revision = revision
        self.snapshotRevision = stored.snapshotRevision
        // Keep only the contiguous run that ends at the current revision.
        var log = stored.operations
        if let gap = log.indices.last(where: { $0 > 0 && log[$0].revision != log[$0 - 1].revision + 1 }) {
            log.removeFirst(gap)
        }
        // A log that stops short of the text cannot transform anything safely: catch-ups then
        // get the whole text instead.
        if log.last?.revision != revision { log = [] }
        self.log = log
        for entry in log { applied[entry.opId] = entry.revision }
    }

    /// The oldest revision an operation may be based on: the log reaches back to it.
    var oldestBase: Int64 { log.first.map { $0.revision - 1 } ?? revision }

    /// The logged operations after `base`, oldest first. `base` must be in `oldestBase...revision`.
    func operations(after base: Int64) -> ArraySlice<StoredOperation> {
        guard let first = log.first, base < revision else { return [] }
        return log[Int(base + 1 - first.revision)...]
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
            rebased = try TextOperation.transform(rebased, entry.operation).0
        }
        return rebased
    }

    /// Applies an operation that fits the current text and logs it. Returns the log entry.
    /// Selections are moved separately (`moveSelections`), once the operation is committed.
    mutating func apply(_ operation: TextOperation, opId: String, author: DocumentAuthor,
                        at time: Millis) throws(PanesError) -> StoredOperation {
        text = try operation.apply(to: text)
        length = operation.targetLength
        revision += 1
        let entry = StoredOperation(revision: revision, operation: operation, opId: opId, author: author, createdAt: time)
        log.append(entry)
        applied[opId] = revision
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
    /// applied to; keeps this document's participants, which may have changed meanwhile.
    mutating func adoptText(of other: OpenDocument) {
        text = other.text
        length = other.length
        revision = other.revision
        snapshotRevision = other.snapshotRevision
        log = other.log
        applied = other.applied
    }

    /// Every `snapshotEvery` operations: takes a snapshot and forgets the log before
    /// `snapshot - retention`, returning the store command that does the same on disk.
    mutating func compact(snapshotEvery: Int, retention: Int) -> StoreCommand? {
        guard revision - snapshotRevision >= Int64(snapshotEvery) else { return nil }
        snapshotRevision = revision
        let keepFrom = revision - Int64(retention) + 1
        if let first = log.first, first.revision < keepFrom {
            let drop = min(log.count, Int(keepFrom - first.revision))
            for entry in log[..<drop] where applied[entry.opId] == entry.revision { applied[entry.opId] = nil }
            log.removeFirst(drop)
        }
        return .snapshotDocument(id, revision: revision, text: text, keepFrom: keepFrom)
    }

    /// The switcher's snapshot of the document: its first scalars.
    var preview: JSONValue {
        ["text": .string(String(String.UnicodeScalarView(text.unicodeScalars.prefix(Self.previewScalars))))]
    }

    static let previewScalars = 120

    /// Participants in the order they opened the document.
    var orderedParticipants: [DocumentParticipant] {
        participants.values.sorted { $0.joined < $1.joined }
    }
}
