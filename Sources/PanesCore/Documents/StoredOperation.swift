/// One accepted operation as the log keeps it: it takes the document from `revision - 1` to
/// `revision`. Kept with its client op id, so a resend is recognised after a restart too.
public struct StoredOperation: Sendable, Equatable {
    public var revision: Int64
    /// The operation as applied, i.e. already transformed past everything before it.
    public var operation: TextOperation
    /// The client's identifier for it (`edit`'s `opId`).
    public var opId: String
    public var author: DocumentAuthor
    public var createdAt: Millis

    public init(revision: Int64, operation: TextOperation, opId: String, author: DocumentAuthor, createdAt: Millis) {
        self.revision = revision
        self.operation = operation
        self.opId = opId
        self.author = author
        self.createdAt = createdAt
    }

    /// The wire form of one caught-up operation (`openDocument` with `revision`).
    var json: JSONValue {
        ["revision": .int(revision), "operation": operation.json, "opId": .string(opId), "author": author.json]
    }
}

/// Who made an operation: the scene (which may be gone by now), its user and display name.
public struct DocumentAuthor: Sendable, Equatable {
    public var scene: String
    public var user: String
    public var name: String

    public init(scene: String, user: String, name: String) {
        self.scene = scene
        self.user = user
        self.name = name
    }

    var json: JSONValue { ["scene": .string(scene), "user": .string(user), "name": .string(name)] }
}
