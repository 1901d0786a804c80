/// Turns a parsed frame into a request, or into an error that names what was wrong.
///
/// Decoding is pure and stateless: it checks shapes, types and sizes that need no server
/// state. Checks that need state (does the session exist, is the value's type the registered
/// one) happen in the hub.
public struct MessageDecoder: Sendable {
    public var settings: Settings

    public init(settings: Settings) {
        self.settings = settings
    }

    /// The outcome for a frame that could not become a request: the error plus whatever
    /// identifier and type could be read, so the reply still names the request.
    public struct Failure: Error, Sendable {
        public let id: RequestID?
        public let type: String?
        public let error: PanesError
    }

    public func decode(_ json: JSONValue) -> Result<ClientRequest, Failure> {
        guard case .object(let object) = json else {
            return .failure(Failure(id: nil, type: nil,
                                    error: PanesError(.invalidMessage, "a request must be a JSON object, not \(json.typeName)")))
        }
        let type = object["type"]?.stringValue
        let id = object["id"].flatMap(RequestID.init(json:))
        guard let type else {
            return .failure(Failure(id: id, type: nil, error: PanesError(.invalidMessage, "`type` must be a string", field: "type")))
        }
        guard let id else {
            return .failure(Failure(id: nil, type: type, error: PanesError(
                .invalidMessage, "`id` must be an integer or a string of at most 64 bytes", field: "id")))
        }
        do throws(PanesError) {
            let message = try decodeMessage(type: type, FieldReader(object))
            return .success(ClientRequest(id: id, message: message))
        } catch {
            return .failure(Failure(id: id, type: type, error: error))
        }
    }

    func decodeMessage(type: String, _ fields: FieldReader) throws(PanesError) -> ClientMessage {
        switch type {
        case "connect": return .connect(try decodeConnect(fields))
        case "lifecycle":
            guard let visible = try fields.bool("visible") else { throw .missing("visible") }
            guard let focused = try fields.bool("focused") else { throw .missing("focused") }
            return .lifecycle(visible: visible, focused: focused)
        case "updateActivity":
            guard fields.object.keys.contains("activity") else { throw .missing("activity") }
            return .updateActivity(try checkedActivity(fields, "activity"))
        case "setUserInfo":
            guard let userInfo = try fields.object("userInfo") else { throw .missing("userInfo") }
            let mode = try fields.string("mode", maxLength: 16) ?? "replace"
            guard mode == "replace" || mode == "merge" else {
                throw .invalid("mode", "must be `replace` or `merge`, not `\(mode)`")
            }
            let size = JSONValue.object(userInfo).encodedSize
            guard size <= settings.maxUserInfoBytes else {
                throw .tooLarge("userInfo", size: size, limit: settings.maxUserInfoBytes, setting: "maxUserInfoBytes")
            }
            return .setUserInfo(userInfo, merge: mode == "merge")
        case "listSessions":
            return .listSessions(watch: try fields.bool("watch") ?? false)
        case "requestDestruction":
            let session = SessionID(try fields.requiredString("session", maxLength: 64))
            let animation = try fields.choice("animation", DismissalAnimation.self) ?? .standard
            return .requestDestruction(session, animation: animation)
        case "ping":
            return .ping
        case "refreshToken":
            guard let token = try token(fields, "token") else { throw .missing("token") }
            return .refreshToken(token)
        default:
            if let request = try PreferenceRequest.decode(type: type, fields, self) { return .preferences(request) }
            if let request = try WindowRequest.decode(type: type, fields, self) { return .windows(request) }
            if let request = try DocumentRequest.decode(type: type, fields, self) { return .documents(request) }
            throw PanesError(.unknownType, "no request has type `\(type)`", field: "type")
        }
    }

    func decodeConnect(_ fields: FieldReader) throws(PanesError) -> ConnectRequest {
        let protocolVersion = try fields.requiredInt("protocol", in: 0...1_000)
        let clientVersion = try fields.string("client", maxLength: 128) ?? "unknown"
        let workspace = try fields.string("workspace", maxLength: 64) ?? "default"
        guard Self.isName(workspace) else {
            throw .invalid("workspace", "must be 1 to 64 letters, digits, `.`, `_` or `-`")
        }
        var credentials = ConnectRequest.Credentials.name("guest")
        if let auth = try fields.reader("auth") {
            if let token = try token(auth, "token") {
                credentials = .token(token)
            } else if let name = try auth.string("name", maxLength: 64) {
                let trimmed = String(name.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
                guard !trimmed.isEmpty else { throw .invalid("auth.name", "must not be empty") }
                credentials = .name(trimmed)
            } else {
                throw .missing("auth.name")
            }
        }
        var traits = Traits()
        if let traitFields = try fields.reader("traits") {
            traits.width = try traitFields.choice("width", Traits.Width.self) ?? .regular
            traits.pointer = try traitFields.choice("pointer", Traits.Pointer.self) ?? .fine
        }
        var resume: (SessionID, String)?
        if let session = try fields.reader("session") {
            let id = try session.requiredString("id", maxLength: 64)
            let secret = try session.requiredString("secret", maxLength: 64)
            resume = (SessionID(id), secret)
        }
        var visible: Bool?, focused: Bool?
        if let state = try fields.reader("state") {
            visible = try state.bool("visible")
            focused = try state.bool("focused")
        }
        return ConnectRequest(protocolVersion: Int(protocolVersion), clientVersion: clientVersion,
                              workspace: workspace, credentials: credentials, traits: traits,
                              resume: resume, ticket: try fields.string("ticket", maxLength: 64),
                              visible: visible, focused: focused)
    }

    /// Reads an activity and holds it to `maxActivityBytes`.
    func checkedActivity(_ fields: FieldReader, _ key: String) throws(PanesError) -> Activity? {
        guard let value = fields.value(key) else { return nil }
        let size = value.encodedSize
        guard size <= settings.maxActivityBytes else {
            throw .tooLarge(fields.path(key), size: size, limit: settings.maxActivityBytes, setting: "maxActivityBytes")
        }
        return try Activity(json: value, field: fields.path(key))
    }

    /// Workspace and user names: short, printable, safe in logs and file names.
    static func isName(_ string: String) -> Bool {
        !string.isEmpty && string.utf8.count <= 64 && string.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }
}
