/// An `edit` waiting for its document's next commit.
struct DocumentEdit: Sendable {
    let context: RequestContext
    /// The revision the operation was made on.
    let revision: Int64
    let operation: TextOperation
    let opId: String
    let author: DocumentAuthor
    /// What let its sender edit when it came (`Hub.editStanding`): checked again when its batch
    /// is made, so an edit queued before a downgrade or a revocation is refused, not applied.
    let standing: EditStanding
    /// The operation transformed past everything committed up to `revision` (nil until its
    /// first batch). Transforming past a list of operations is transforming past each in turn,
    /// so an edit whose batch has to be made again (a conflict with another node's commit) goes
    /// on from here instead of from the revision it was made on: the same result, for the cost
    /// of what was committed since.
    var rebased: (revision: Int64, operation: TextOperation)?
    /// The version a `restoreVersion` brings back (`Hub+Versions.swift`): its reply carries the
    /// operation as applied, which the restoring scene applies itself (it gets no event).
    var restoring: VersionRecord? = nil

    /// The request the edit answers, for its errors.
    var requestType: String { restoring == nil ? EditRequest.type : RestoreVersionRequest.type }

    /// Where rebasing goes on from: the kept rebase, or the operation as made.
    var rebaseStart: (revision: Int64, operation: TextOperation) { rebased ?? (revision, operation) }
}

/// What an edit's sender had for it when it came: the workspace role of its scene and the
/// link (by id) the scene opened the document through, if any. A scene that has gone since its
/// edit was queued is judged by these; a live one by its workspace role now.
struct EditStanding: Sendable {
    let workspaceRole: Role
    let link: String?
    /// `DocumentRights.epoch` when it was checked.
    let epoch: UInt64
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
