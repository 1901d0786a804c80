/// A live scene: one connection attached to one session. Lives only in memory, on the
/// service thread, and ends with its connection.
public struct Scene: Sendable {
    public let id: SceneID
    // The one-byte fields (four bytes in all) in the 6 bytes after `id`'s 18: Swift lays a
    // struct out in declaration order, and between wider fields each took 8 bytes. With both
    // optional times held as sentinels a scene is 136 bytes (152 with the fields after the
    // times, `tokenExpiresAt` optional, and a `connectedAt` nothing read).
    /// The user's role in the workspace, from connect; a `refreshToken` replaces it with the
    /// new token's.
    public var role: Role
    public var traits: Traits
    public var state: ActivationState
    public let connection: ConnectionID
    public let session: SessionID
    public let owner: OwnerKey
    /// The user's display name, from connect; a `refreshToken` replaces it with the new token's.
    public var userName: String
    public let clientVersion: String
    /// `tokenExpiresAt`, `Int64.max` for none.
    private var tokenExpiresAtOrMax: Millis = .max
    /// `restoredAt`, `Int64.min` for none.
    private var restoredAtOrMin: Millis = .min

    /// When the scene's token expires (its `exp`); the scene is closed with 4010
    /// `jwtClockSkewMs` later. Nil for credentials that do not expire.
    public var tokenExpiresAt: Millis? {
        get { tokenExpiresAtOrMax == .max ? nil : tokenExpiresAtOrMax }
        set { tokenExpiresAtOrMax = newValue ?? .max }
    }

    /// When a restoration activity was handed back; an abnormal disconnect soon after counts
    /// towards a clean start. Set only to the hub's clock.
    public var restoredAt: Millis? {
        get { restoredAtOrMin == .min ? nil : restoredAtOrMin }
        set { restoredAtOrMin = newValue ?? .min }
    }

    public init(id: SceneID, connection: ConnectionID, session: SessionID, owner: OwnerKey, userName: String,
                role: Role, traits: Traits, clientVersion: String) {
        self.id = id
        self.connection = connection
        self.session = session
        self.owner = owner
        self.userName = userName
        self.role = role
        self.traits = traits
        self.state = .unattached
        self.clientVersion = clientVersion
    }
}

extension Scene: TableRecord {
    var tableKey: SceneID { id }
}
