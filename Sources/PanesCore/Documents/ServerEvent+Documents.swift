/// The documents' events (PROTOCOL.md, "Events"), each shape written once.
extension ServerEvent {
    /// What happened to a document in the list: `created`, `renamed`, `deleted`, `modified`
    /// (its text changed), `presence` (who has it open changed), `shared` (the observer may
    /// see it now) or `unshared` (no longer: it leaves the observer's list).
    public enum DocumentChange: String, Sendable, CaseIterable {
        case created, renamed, deleted, modified, presence, shared, unshared
    }

    /// The document list changed; carries the document's summary after the change, and for a
    /// deletion who deleted it (`{"user", "name", "scene"}`).
    static func documentsChanged(_ change: DocumentChange, _ summary: JSONValue, by: JSONValue? = nil) -> ServerEvent {
        var fields: JSONObject = ["change": .string(change.rawValue), "document": summary]
        if let by { fields["by"] = by }
        return ServerEvent("documentsChanged", fields)
    }

    /// An operation another scene made, as the server applied it.
    static func documentOperation(_ document: DocumentID, _ entry: StoredOperation) -> ServerEvent {
        ServerEvent("documentOperation", [
            "document": .string(document.rawValue), "revision": .int(entry.revision), "operation": entry.operation.json,
            "opId": .string(entry.opId), "author": entry.author.json,
        ])
    }

    /// A scene's presence in a document changed, or it left (`left: true`).
    static func presence(_ fields: JSONValue) -> ServerEvent {
        ServerEvent("presence", fields.objectValue ?? [:])
    }

    /// The document was deleted, by `by` (`{"user", "name", "scene"}`); it is closed for this scene.
    static func documentDeleted(_ document: DocumentID, by: JSONValue) -> ServerEvent {
        ServerEvent("documentDeleted", ["document": .string(document.rawValue), "by": by])
    }
}
