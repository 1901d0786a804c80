/// `connect`: makes a connection a scene, of a new, resumed, forked or ticketed session.
/// Handled by `Hub.connect` (Hub+Connect.swift) before the connection is a scene; sent again
/// on a scene it is an error.
public struct ConnectRequest: Request, Equatable {
    public static let type = "connect"

    public var asConnect: ConnectRequest? { self }

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
    public var resume: Resume?
    /// A single-use window ticket from `requestActivation` or a drop; wins over `resume`.
    public var ticket: String?
    public var visible: Bool?
    public var focused: Bool?
    /// Set when this connect is a retry of a keyed one that was answered (its reply lost): it
    /// attaches the session the first one attached, with a new secret. Never read off the wire.
    public var replay: Replay?

    public struct Resume: Sendable, Equatable {
        public var id: SessionID
        public var secret: String
    }

    /// What a keyed connect's record keeps: the session it attached and how it came by it. The
    /// secret is not kept (only its hash is stored anywhere), so a retry is given a new one.
    public struct Replay: Sendable, Equatable {
        public var session: SessionID
        public var created: Bool
        public var forkedFrom: SessionID?
        /// The session's secret, when the retry proved it (a resume's): handed back as it is.
        var provenSecret: String?

        init?(_ recorded: JSONValue) {
            guard let session = recorded["session"]?.stringValue, let created = recorded["created"]?.boolValue else {
                return nil
            }
            self.session = SessionID(session)
            self.created = created
            forkedFrom = recorded["forkedFrom"]?.stringValue.map(SessionID.init)
        }
    }

    /// A connect that creates a session (or forks one, or redeems a ticket) takes a key: its
    /// retry after a lost reply attaches the same session instead of making another.
    public static var idempotency: Idempotency { .recorded }

    /// What the connect asks for, not how it says who it is: a retry may carry a fresh token,
    /// other traits or another lifecycle state.
    public static func fingerprintFields(_ fields: JSONObject) -> JSONObject {
        [
            "workspace": fields["workspace"] ?? .null,
            "session": fields["session"]?["id"] ?? .null,
            "ticket": fields["ticket"] ?? .null,
        ]
    }

    public static func recordedResult(_ result: JSONValue) -> JSONValue {
        .object([
            "session": result["session"]?["persistentIdentifier"],
            "created": result["created"],
            "forkedFrom": result["forkedFrom"].flatMap { $0 == .null ? nil : $0 },
        ])
    }

    public init(protocolVersion: Int = 1, clientVersion: String = "test", workspace: String = "default",
                credentials: Credentials = .name("alice"), traits: Traits = Traits(),
                resume: Resume? = nil, ticket: String? = nil, visible: Bool? = nil, focused: Bool? = nil) {
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

    public init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        protocolVersion = Int(try fields.requiredInt("protocol", in: 0...1_000))
        clientVersion = try fields.string("client", maxLength: 128) ?? "unknown"
        workspace = try fields.string("workspace", maxLength: 64) ?? "default"
        guard MessageDecoder.isName(workspace) else {
            throw .invalid("workspace", "must be 1 to 64 letters, digits, `.`, `_` or `-`")
        }
        credentials = .name("guest")
        if let auth = try fields.reader("auth") {
            if let token = try auth.token("token", settings: settings) {
                credentials = .token(token)
            } else if let name = try auth.string("name", maxLength: 64) {
                guard let trimmed = Self.trimmed(name) else { throw .invalid("auth.name", "must not be empty") }
                credentials = .name(trimmed)
            } else {
                throw .missing("auth.name")
            }
        }
        traits = try fields.reader("traits").map { reader throws(PanesError) in try Traits(reader) } ?? Traits()
        if let session = try fields.reader("session") {
            resume = Resume(id: SessionID(try session.requiredString("id", maxLength: 64)),
                            secret: try session.requiredString("secret", maxLength: 64))
        }
        ticket = try fields.string("ticket", maxLength: 64)
        if let state = try fields.reader("state") {
            visible = try state.bool("visible")
            focused = try state.bool("focused")
        }
    }

    /// A name without leading and trailing whitespace: from the first character that is not
    /// whitespace to the last; nil when there is none.
    static func trimmed(_ name: String) -> String? {
        // A name that starts and ends with an ASCII byte that is not whitespace is already
        // trimmed, and telling needs no walk by characters: that first byte begins the first
        // character, and the last character begins with the last byte or with a prepended mark,
        // neither of them whitespace (a character's whitespace is its first scalar's).
        let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
        if let head = name.utf8.first, let tail = name.utf8.last, head < 0x80, tail < 0x80, !isSpace(head), !isSpace(tail) {
            return name
        }
        guard let first = name.firstIndex(where: { !$0.isWhitespace }), let last = name.lastIndex(where: { !$0.isWhitespace })
        else { return nil }
        return String(name[first...last])
    }

    public func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        throw PanesError(.alreadyConnected, "this connection is already scene \(context.scene)")
    }
}

/// How a destroyed session's window goes away (UIWindowScene.DismissalAnimation).
public enum DismissalAnimation: String, Sendable, CaseIterable {
    case standard, commit, decline
}
