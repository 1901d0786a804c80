/// A document as the store hands it back to be opened: its record, the latest snapshot, and
/// the log from `operationLogRetention` operations before that snapshot up to the newest.
///
/// The current text is the snapshot with the operations after `snapshotRevision` applied; the
/// operations at or before it are kept only to catch clients up and to recognise resends.
public struct StoredDocument: Sendable, Equatable {
    public var record: DocumentRecord
    public var snapshotRevision: Int64
    public var snapshotText: String
    /// Oldest first, contiguous, ending at the document's revision.
    public var operations: [StoredOperation]
    /// The client operations applied before the log's start, remembered with the snapshot.
    public var applied: AppliedStreams

    public init(record: DocumentRecord, snapshotRevision: Int64, snapshotText: String, operations: [StoredOperation],
                applied: AppliedStreams = AppliedStreams()) {
        self.record = record
        self.snapshotRevision = snapshotRevision
        self.snapshotText = snapshotText
        self.operations = operations
        self.applied = applied
    }
}
