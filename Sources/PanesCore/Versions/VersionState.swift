/// What the hub holds of versions: the requests waiting for a version read, and, per document
/// this node has committed edits to, how far it is from its next automatic checkpoint. Version
/// records and texts themselves stay in the store (`VersionRecord`).
struct VersionState: Sendable {
    /// Numbers version reads, to match each result to its request.
    var nextTicket: Int64 = 1
    var waiting: [Int64: VersionWaiter] = [:]
    /// Documents with operations committed by this node since their last checkpoint.
    var progress: [DocumentID: CheckpointProgress] = [:]
    /// When each document in `progress` may be quiet enough for its checkpoint: one entry per
    /// document, pushed again (later) when an edit came meanwhile.
    var pauseDeadlines = DeadlineQueue<DocumentID>()

    mutating func makeTicket() -> Int64 {
        defer { nextTicket += 1 }
        return nextTicket
    }
}

/// A request waiting for its version read.
struct VersionWaiter: Sendable {
    enum Purpose: Sendable {
        case list
        case read
        case compare
        /// A `saveVersion` waiting to know how many named versions there are: the version is
        /// the document's text when the request came.
        case save(VersionRecord, text: Rope)
        case restore
    }

    let context: RequestContext
    let request: String
    let purpose: Purpose
}

/// Operations this node committed to a document since its last checkpoint.
struct CheckpointProgress: Sendable {
    var operations = 0
    /// Who made the latest of them: the checkpoint's `createdBy`.
    var lastUser = ""
    /// When the last of them was made (monotonic clock: only the pause after it is measured).
    var lastEditAt: Millis = 0
}
