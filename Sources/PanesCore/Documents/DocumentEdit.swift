/// An `edit` waiting for its document's next commit.
struct DocumentEdit: Sendable {
    let context: RequestContext
    /// The revision the operation was made on.
    let revision: Int64
    let operation: TextOperation
    let opId: String
    let author: DocumentAuthor
    /// The operation transformed past what was committed up to `rebasedRevision` (at first,
    /// the operation as made). Transforming past a list of operations is transforming past
    /// each in turn, so an edit whose batch has to be made again (a conflict with another
    /// node's commit) goes on from here instead of from `revision`: the same result, for the
    /// cost of what was committed since.
    private(set) var rebasedRevision: Int64
    private(set) var rebasedOperation: TextOperation

    init(context: RequestContext, revision: Int64, operation: TextOperation, opId: String, author: DocumentAuthor) {
        self.context = context
        self.revision = revision
        self.operation = operation
        self.opId = opId
        self.author = author
        rebasedRevision = revision
        rebasedOperation = operation
    }

    /// Notes the operation transformed past everything committed up to `revision`.
    mutating func rebased(to revision: Int64, _ operation: TextOperation) {
        rebasedRevision = revision
        rebasedOperation = operation
    }
}

/// Edits of one document committed together: each one's outcome, and the document's text and
/// log as they will be once the commit is durable.
struct DocumentBatch: Sendable {
    enum Outcome: Sendable {
        case failed(PanesError)
        /// A resend of an operation applied as `revision`.
        case duplicate(revision: Int64)
        case applied(StoredOperation)
    }

    let edits: [DocumentEdit]
    let outcomes: [Outcome]
    /// The document after the batch (text and log; its participants are not used).
    let working: OpenDocument

    /// How many of its edits the batch applies (not failed, not duplicates).
    var appliedCount: Int {
        outcomes.count { if case .applied = $0 { true } else { false } }
    }
}
