/// A session's state restoration archive: the activity to come back to and when and by
/// what it was saved, so stale or incompatible state can be skipped instead of trusted.
public struct Restoration: Sendable, Equatable {
    public var activity: Activity
    public var metadata: RestorationMetadata

    public init(activity: Activity, metadata: RestorationMetadata) {
        self.activity = activity
        self.metadata = metadata
    }
}

public struct RestorationMetadata: Sendable, Equatable {
    public var savedAt: Millis
    public var serverVersion: String
    public var protocolVersion: Int
    public var clientVersion: String
    /// The document the activity showed was deleted (its target and title were dropped): the
    /// activity is not handed back, and the connect says `document_gone`. Kept here, with the
    /// rest of what is known about the archive, so it survives restarts in every store.
    public var documentGone: Bool

    public init(savedAt: Millis, serverVersion: String, protocolVersion: Int, clientVersion: String,
                documentGone: Bool = false) {
        self.savedAt = savedAt
        self.serverVersion = serverVersion
        self.protocolVersion = protocolVersion
        self.clientVersion = clientVersion
        self.documentGone = documentGone
    }

    public var json: JSONValue {
        .object([
            "savedAt": .int(savedAt),
            "serverVersion": .string(serverVersion),
            "protocolVersion": .int(Int64(protocolVersion)),
            "clientVersion": .string(clientVersion),
            "documentGone": documentGone ? .bool(true) : nil,
        ])
    }

    public init(json: JSONValue) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid("metadata", "must be an object") }
        let fields = FieldReader(object, prefix: "metadata")
        savedAt = try fields.requiredInt("savedAt")
        serverVersion = try fields.string("serverVersion", maxLength: 64) ?? ""
        protocolVersion = Int(try fields.int("protocolVersion") ?? 0)
        clientVersion = try fields.string("clientVersion", maxLength: 256) ?? ""
        documentGone = try fields.bool("documentGone") ?? false
    }
}

/// What happened to a session's restoration activity on connect.
public enum RestorationStatus: String, Sendable {
    /// No restoration activity was stored.
    case none
    /// It was handed back in the reply.
    case restored
    /// It was older than `restorationMaxAgeMs` and was not handed back.
    case stale
    /// It was saved by a newer protocol than this server speaks and was not handed back.
    case incompatible
    /// A handed-over activity (a ticket's) takes precedence; the stored one was not handed back.
    case superseded
    /// Scenes of this session crashed soon after restoring too often in a row: it was dropped.
    case cleanStart
    /// The document it showed no longer exists: it was not handed back, so the window starts
    /// clean instead of reopening a dead identifier.
    case documentGone = "document_gone"
}
