/// One kept version of a document: the text at a revision, with who made it and when. Named
/// versions are saved by a person (`saveVersion`); checkpoints are taken by the server after a
/// pause in editing and every `versionCheckpointOperations` operations.
///
/// The text is stored with the record (`StoreCommand.saveVersion`), so reading a version never
/// depends on how much of the operation log is kept. Records are not held in memory: lists and
/// texts are read from the store when asked for, so every node of a cluster sees the same ones.
public struct VersionRecord: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Saved by a person, with a name; kept until the document is deleted.
        case named
        /// Taken by the server; the oldest go past `maxCheckpointsPerDocument`.
        case checkpoint
    }

    /// `ver_…`, unique in the store.
    public let id: String
    public let document: DocumentID
    public let kind: Kind
    /// The document's revision the text is at.
    public let revision: Int64
    /// A named version's name; nil for a checkpoint.
    public let name: String?
    public let createdAt: Millis
    /// A named version's saver; for a checkpoint, who made the last operation it includes.
    public let createdBy: String
    /// The text's length in Unicode scalars.
    public let length: Int

    public init(id: String, document: DocumentID, kind: Kind, revision: Int64, name: String?, createdAt: Millis,
                createdBy: String, length: Int) {
        self.id = id
        self.document = document
        self.kind = kind
        self.revision = revision
        self.name = name
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.length = length
    }

    /// The wire form (PROTOCOL.md, "Versions").
    var json: JSONValue {
        var object: JSONObject = [
            "id": .string(id), "document": .string(document.rawValue), "kind": .string(kind.rawValue),
            "revision": .int(revision), "createdAt": .int(createdAt), "createdBy": .string(createdBy),
            "length": JSONValue(length),
        ]
        if let name { object["name"] = .string(name) }
        return .object(object)
    }
}
