/// An `edit` waiting for its document's next commit.
struct DocumentEdit: Sendable {
    let context: RequestContext
    /// The revision the operation was made on.
    let revision: Int64
    let operation: TextOperation
    let opId: String
    let author: DocumentAuthor
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
