/// Everything a client can ask, decoded and validated. Each case's fields are documented in
/// PROTOCOL.md under the request's `type`.
public enum ClientMessage: Sendable, Equatable {
    // Scenes and sessions
    case connect(ConnectRequest)
    case lifecycle(visible: Bool, focused: Bool)
    case updateActivity(Activity?)
    case setUserInfo([String: JSONValue], merge: Bool)
    case listSessions(watch: Bool)
    case requestDestruction(SessionID, animation: DismissalAnimation)
    case ping
    /// A new token for the scene before its current one expires (`Hub+Tokens.swift`).
    case refreshToken(String)
    // Features, each decoded and handled in its own files.
    case preferences(PreferenceRequest)
    case windows(WindowRequest)
    case documents(DocumentRequest)

    /// The wire name of each request, for replies, logs and metrics.
    public var type: String {
        switch self {
        case .connect: "connect"
        case .lifecycle: "lifecycle"
        case .updateActivity: "updateActivity"
        case .setUserInfo: "setUserInfo"
        case .listSessions: "listSessions"
        case .requestDestruction: "requestDestruction"
        case .ping: "ping"
        case .refreshToken: "refreshToken"
        case .preferences(let request): request.type
        case .windows(let request): request.type
        case .documents(let request): request.type
        }
    }
}

/// A request: the client's identifier plus what it asks.
public struct ClientRequest: Sendable, Equatable {
    public let id: RequestID
    public let message: ClientMessage

    public init(id: RequestID, message: ClientMessage) {
        self.id = id
        self.message = message
    }
}

/// How a destroyed session's window goes away (UIWindowScene.DismissalAnimation).
public enum DismissalAnimation: String, Sendable, CaseIterable {
    case standard, commit, decline
}

/// What a scene says about itself when it connects.
public struct ConnectRequest: Sendable, Equatable {
    public enum Credentials: Sendable, Equatable {
        case name(String)
        case token(String)
    }

    public var protocolVersion: Int
    public var clientVersion: String
    public var workspace: String
    public var credentials: Credentials
    public var traits: Traits
    /// Identifier and secret of the session to resume.
    public var resume: (id: SessionID, secret: String)?
    /// A single-use window ticket from `requestActivation` or a drop; wins over `resume`.
    public var ticket: String?
    public var visible: Bool?
    public var focused: Bool?

    public init(protocolVersion: Int = 1, clientVersion: String = "test", workspace: String = "default",
                credentials: Credentials = .name("alice"), traits: Traits = Traits(),
                resume: (id: SessionID, secret: String)? = nil, ticket: String? = nil,
                visible: Bool? = nil, focused: Bool? = nil) {
        self.protocolVersion = protocolVersion
        self.clientVersion = clientVersion
        self.workspace = workspace
        self.credentials = credentials
        self.traits = traits
        self.resume = resume
        self.ticket = ticket
        self.visible = visible
        self.focused = focused
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.protocolVersion == b.protocolVersion && a.clientVersion == b.clientVersion && a.workspace == b.workspace
            && a.credentials == b.credentials && a.traits == b.traits && a.resume?.id == b.resume?.id
            && a.resume?.secret == b.resume?.secret && a.ticket == b.ticket && a.visible == b.visible
            && a.focused == b.focused
    }
}
