/// A live scene: one connection attached to one session. Lives only in memory, on the
/// service thread, and ends with its connection.
public struct Scene: Sendable {
    public let id: SceneID
    // The one-byte fields (four bytes in all) in the 6 bytes after `id`'s 18: Swift lays a
    // struct out in declaration order, and between wider fields each took 8 bytes. With both
    // optional times held as sentinels and the owner, name and client version in a `SceneUser`
    // its owner's scenes share, a scene is 80 bytes (136 with those four strings inline, 152
    // with the fields after the times, `tokenExpiresAt` optional, and a `connectedAt` nothing
    // read).
    /// The user's role in the workspace, from connect; a `refreshToken` replaces it with the
    /// new token's.
    public var role: Role
    public var traits: Traits
    public var state: ActivationState
    public let connection: ConnectionID
    public let session: SessionID
    /// The owner, the display name and the client's version, shared with the owner's other
    /// scenes that have the same three (`Scenes.attach`).
    private(set) var user: SceneUser
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

    public var owner: OwnerKey { user.owner }

    /// The user's display name, from connect; a `refreshToken` replaces it with the new token's
    /// (a different name gives the scene a `SceneUser` of its own from then on).
    public var userName: String {
        get { user.name }
        set {
            guard !Identifier.equal(newValue, user.name) else { return }
            user = SceneUser(owner: user.owner, name: newValue, clientVersion: user.clientVersion)
        }
    }

    public var clientVersion: String { user.clientVersion }

    public init(id: SceneID, connection: ConnectionID, session: SessionID, owner: OwnerKey, userName: String,
                role: Role, traits: Traits, clientVersion: String) {
        self.init(id: id, connection: connection, session: session,
                  user: SceneUser(owner: owner, name: userName, clientVersion: clientVersion), role: role, traits: traits)
    }

    /// A scene holding `user` (`Scenes.attach` hands it the one its owner's scenes share).
    init(id: SceneID, connection: ConnectionID, session: SessionID, user: SceneUser, role: Role, traits: Traits) {
        self.id = id
        self.connection = connection
        self.session = session
        self.user = user
        self.role = role
        self.traits = traits
        self.state = .unattached
    }
}

extension Scene: TableRecord {
    var tableKey: SceneID { id }
}
