/// A live scene: one connection attached to one session. Lives only in memory, on the
/// service thread, and ends with its connection.
public struct Scene: Sendable {
    public let id: SceneID
    public let connection: ConnectionID
    public let session: SessionID
    public let owner: OwnerKey
    /// The user's display name and role in the workspace, from connect; a `refreshToken`
    /// replaces them with the new token's.
    public var userName: String
    public let clientVersion: String
    public let connectedAt: Millis
    /// When the scene's token expires (its `exp`); the scene is closed with 4010
    /// `jwtClockSkewMs` later. Nil for credentials that do not expire.
    public var tokenExpiresAt: Millis?
    // The one-byte fields after the 9-byte optional: Swift lays a struct out in declaration
    // order, and between wider fields each took 8 bytes.
    public var role: Role
    public var traits: Traits
    public var state: ActivationState
    /// `restoredAt`, `Int64.min` for none: without an optional's tag byte a scene is 152 bytes
    /// (160 with it, and with session and scene ids inline).
    private var restoredAtOrMin: Millis = .min

    /// When a restoration activity was handed back; an abnormal disconnect soon after counts
    /// towards a clean start. Set only to the hub's clock.
    public var restoredAt: Millis? {
        get { restoredAtOrMin == .min ? nil : restoredAtOrMin }
        set { restoredAtOrMin = newValue ?? .min }
    }

    public init(id: SceneID, connection: ConnectionID, session: SessionID, owner: OwnerKey, userName: String,
                role: Role, traits: Traits, clientVersion: String, connectedAt: Millis) {
        self.id = id
        self.connection = connection
        self.session = session
        self.owner = owner
        self.userName = userName
        self.role = role
        self.traits = traits
        self.state = .unattached
        self.clientVersion = clientVersion
        self.connectedAt = connectedAt
    }
}

extension Scene: TableRecord {
    var tableKey: SceneID { id }
}
