/// Documents as channels of the generic writer (`Hub+ChannelWriting.swift`): a document's
/// revision is its channel's version, and its writes are `DocumentEdit`s. Only an open
/// document is held; one nobody has open any more goes once its writer is settled.
enum DocumentChannel: WrittenChannel {
    static var writers: WritableKeyPath<CommitState, ChannelWriters<DocumentID, DocumentEdit>> { \.documentWriters }

    static func held(_ id: DocumentID, in hub: Hub) -> Int64? {
        hub.documents.open[id]?.revision
    }

    static func catchUpRead(_ id: DocumentID, afterConflict: Bool, in hub: inout Hub) -> LoadRequest {
        hub.metrics.documentCatchUps[afterConflict ? "conflict" : "notice", default: 0] += 1
        if hub.sharesStore, let document = hub.documents.open[id] { return .operations(id, after: document.revision) }
        return .document(id, retention: OpenDocument.Retention(hub.settings).loadCount)
    }

    static func startBatch(_ id: DocumentID, in hub: inout Hub) {
        hub.startDocumentBatch(id)
    }

    static func fail(_ edits: [DocumentEdit], _ error: PanesError, on id: DocumentID, in hub: inout Hub) {
        for edit in edits {
            hub.fail(edit.context.id, request: edit.requestType, error, to: edit.context.connection)
        }
    }

    static var stuckError: PanesError {
        PanesError(.internalError, "the edit could not be stored; retry later", retryAfterMs: 5_000)
    }

    static func settled(_ id: DocumentID, in hub: inout Hub) {
        hub.evictIfUnused(id)
    }
}
