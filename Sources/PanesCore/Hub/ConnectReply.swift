/// A `connect` reply's result, kept as its parts rather than as a `JSONValue` tree: a reconnect
/// storm sends one per window, and the tree (11 objects, about 20,000 instructions to build and
/// 28,000 to encode, issue 27) was the largest single cost of a resume the server controls.
/// The transport's encoder writes these parts straight into the frame in the protocol's key
/// order (`JSONWriter+ConnectReply`); `json` is the same reply as a tree, for everything else
/// that reads a reply (a keyed connect's recorded outcome, tests).
///
/// A class, and immutable: a reply goes from the hub into an effect, through the runtime and
/// into the encoder, and as a struct each of those steps copied it (retaining and releasing each
/// of its strings and arrays, about 1,300 instructions a resume); a reference is retained once.
public final class ConnectReply: Sendable, Equatable {
    /// What every reply of one server carries the same: `server` and `limits`.
    public struct Constants: Sendable, Equatable {
        public var serverVersion: String
        public var protocolVersion: Int
        public var maxMessageBytes: Int
        public var maxUserInfoBytes: Int
        public var maxActivityBytes: Int
        public var rateLimitPerSecond: Int

        public init(settings: Settings, serverVersion: String, protocolVersion: Int) {
            self.serverVersion = serverVersion
            self.protocolVersion = protocolVersion
            maxMessageBytes = settings.maxMessageBytes
            maxUserInfoBytes = settings.maxUserInfoBytes
            maxActivityBytes = settings.maxActivityBytes
            rateLimitPerSecond = settings.rateLimitPerSecond
        }

        public var server: JSONValue { ["version": .string(serverVersion), "protocol": JSONValue(protocolVersion)] }

        /// The limits a client should respect, so it can check before sending.
        public var limits: JSONValue {
            [
                "maxMessageBytes": JSONValue(maxMessageBytes),
                "maxUserInfoBytes": JSONValue(maxUserInfoBytes),
                "maxActivityBytes": JSONValue(maxActivityBytes),
                "rateLimitPerSecond": JSONValue(rateLimitPerSecond),
            ]
        }
    }

    public let scene: SceneID
    public let identity: Authenticator.Identity
    /// The session as attached; its `json(secret:handBack:)` is the reply's `session`.
    public let session: SceneSession
    /// The session's secret, handed to the client here and nowhere else.
    public let secret: String
    public let created: Bool
    public let forkedFrom: SessionID?
    public let handedOver: [Activity]
    public let restoration: RestorationStatus
    public let traits: Traits
    public let constants: Constants

    public init(scene: SceneID, identity: Authenticator.Identity, session: SceneSession, secret: String, created: Bool,
                forkedFrom: SessionID?, handedOver: [Activity], restoration: RestorationStatus, traits: Traits,
                constants: Constants) {
        self.scene = scene
        self.identity = identity
        self.session = session
        self.secret = secret
        self.created = created
        self.forkedFrom = forkedFrom
        self.handedOver = handedOver
        self.restoration = restoration
        self.traits = traits
        self.constants = constants
    }

    /// Equal parts, every one of them, as when this was a struct.
    public static func == (lhs: ConnectReply, rhs: ConnectReply) -> Bool {
        lhs === rhs
            || (lhs.scene == rhs.scene && lhs.identity == rhs.identity && lhs.session == rhs.session
                && lhs.secret == rhs.secret && lhs.created == rhs.created && lhs.forkedFrom == rhs.forkedFrom
                && lhs.handedOver == rhs.handedOver && lhs.restoration == rhs.restoration && lhs.traits == rhs.traits
                && lhs.constants == rhs.constants)
    }

    /// Whether the stored restoration activity is handed back in `session`.
    public var handsBack: Bool { restoration == .restored }

    public var json: JSONValue {
        .object([
            "scene": .string(scene.rawValue),
            "user": ["id": .string(identity.user), "name": .string(identity.name), "role": .string(identity.role.rawValue)],
            "workspace": .string(session.owner.workspace),
            "session": session.json(secret: secret, handBack: handsBack),
            "auth": ["expiresAt": identity.expiresAt.map(JSONValue.int) ?? .null],
            "created": .bool(created),
            "forkedFrom": forkedFrom.map { .string($0.rawValue) },
            "connectionOptions": ["userActivities": .array(handedOver.map(\.json))],
            "restoration": ["status": .string(restoration.rawValue)],
            "traits": traits.json,
            "server": constants.server,
            "limits": constants.limits,
        ])
    }
}
