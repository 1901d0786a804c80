/// A `connect` read from its frame's text without a `JSONValue` tree (`ConnectFrameReader`, in
/// PanesJSON): every window of a reconnect storm sends one, and the tree (built, read through
/// `FieldReader`, freed) was about 15,000 instructions of a resume's ~112,000 on the service
/// thread (issue 27 §5).
extension ConnectRequest {
    /// The fields of a `connect` frame as its text gave them; nil where a field was absent.
    /// `auth`, `session` and `state` say whether that object was there at all.
    public struct Plain: Sendable {
        public var protocolVersion: Int64?
        public var client: String?
        public var workspace: String?
        public var auth = false
        public var name: String?
        public var token: String?
        public var width: String?
        public var pointer: String?
        public var session = false
        /// Made from the frame's bytes (`SessionID(utf8:)`): a minted id is packed with no
        /// 32-byte `String` made and dropped.
        public var sessionID: SessionID?
        public var secret: String?
        public var ticket: String?
        public var state = false
        public var visible: Bool?
        public var focused: Bool?

        public init() {}
    }

    /// The request `init(_:settings:)` reads from the same fields, or nil wherever it would
    /// throw: such a frame is read the general way, which says what is wrong with it. The
    /// rules are that initializer's, one for one (`ConnectFrameReaderTests` compares the two).
    ///
    /// Every field is checked into a local and moved out of `plain` (`take()`), and the request
    /// made from them once at the end: assigned field by field into `self`, the half-made
    /// request and the optional identifier were copied and destroyed again (~280 instructions a
    /// resume, issue 27).
    public init?(plain: consuming Plain, settings: Settings) {
        guard let version = plain.protocolVersion, version >= 0, version <= 1_000 else { return nil }
        guard Self.fits(plain.client, 128), Self.fits(plain.workspace, 64) else { return nil }
        let clientVersion = plain.client.take() ?? "unknown"
        let workspace = plain.workspace.take() ?? "default"
        guard MessageDecoder.isName(workspace) else { return nil }
        var credentials = Credentials.name("guest")
        if plain.auth {
            if let token = plain.token.take() {
                let size = token.utf8.count
                guard size > 0, size <= settings.maxTokenBytes else { return nil }
                credentials = .token(token)
            } else if let name = plain.name.take() {
                guard name.utf8.count <= 64, let trimmed = Self.trimmed(name) else { return nil }
                credentials = .name(trimmed)
            } else {
                return nil
            }
        }
        var traits = Traits()
        if let width = plain.width.take() {
            guard width.utf8.count <= 64, let chosen = Traits.Width(rawValue: width) else { return nil }
            traits.width = chosen
        }
        if let pointer = plain.pointer.take() {
            guard pointer.utf8.count <= 64, let chosen = Traits.Pointer(rawValue: pointer) else { return nil }
            traits.pointer = chosen
        }
        var resume: Resume?
        if plain.session {
            guard let id = plain.sessionID.take(), let secret = plain.secret.take(), id.bytes.utf8Count <= 64,
                  secret.utf8.count <= 64
            else { return nil }
            resume = Resume(id: id, secret: secret)
        }
        guard Self.fits(plain.ticket, 64) else { return nil }
        self.init(protocolVersion: Int(version), clientVersion: clientVersion, workspace: workspace,
                  credentials: credentials, traits: traits, resume: resume, ticket: plain.ticket.take(),
                  visible: plain.state ? plain.visible : nil, focused: plain.state ? plain.focused : nil)
    }

    /// Absent, or at most `maxLength` bytes (`FieldReader.string(_:maxLength:)`).
    private static func fits(_ string: String?, _ maxLength: Int) -> Bool {
        string.map { $0.utf8.count <= maxLength } ?? true
    }
}
