/// Who a connection is: from a display name (`--auth open`), a listed token (`--auth tokens`)
/// or a signed token checked by a verifier (`--auth jwt`).
public enum Authenticator: Sendable {
    /// Any display name and any workspace; everyone is `openRole` everywhere. For local use.
    case open(role: Role = .owner)
    /// Only listed tokens, each with the workspaces its user belongs to and a role there.
    /// Tokens and workspaces are looked up by their bytes (`Identifier`).
    case tokens([Identifier: TokenGrant])
    /// Tokens an application signs for its users (JWT); the verifier checks signature and
    /// claims, and the token names the workspaces and roles.
    case verified(any TokenVerifier)

    public struct TokenGrant: Sendable, Equatable {
        public var user: String
        public var name: String
        public var workspaces: [Identifier: Role]

        public init(user: String, name: String, workspaces: [Identifier: Role]) {
            self.user = user
            self.name = name
            self.workspaces = workspaces
        }
    }

    /// A user as the hub knows them after connect.
    public struct Identity: Sendable, Equatable {
        public var user: String
        public var name: String
        public var role: Role
        /// When the credential stops being accepted; the scene is closed with 4010 then unless
        /// it sends `refreshToken` first. Nil for credentials that do not expire.
        public var expiresAt: Millis? = nil
    }

    /// Whether some credentials are refused (every mode but `open`): only then are failures
    /// counted per address (`Hub+Authentication.swift`).
    public var refusesCredentials: Bool {
        if case .open = self { return false }
        return true
    }

    /// The identity behind `credentials` in `workspace`, as of `now`.
    public func authenticate(_ credentials: ConnectRequest.Credentials, workspace: String,
                             now: Millis) throws(PanesError) -> Identity {
        switch (self, credentials) {
        case (.open(let role), .name(let name)):
            return Identity(user: name, name: name, role: role)
        case (.open(let role), .token(let token)):
            // In open mode a token is just an opaque name: keeps scripts written for token mode working.
            return Identity(user: token, name: token, role: role)
        case (.tokens, .name):
            throw PanesError(.unauthenticated, "this server requires `auth.token`", field: "auth.token")
        case (.tokens(let grants), .token(let token)):
            guard let grant = grants[token] else {
                throw PanesError(.unauthenticated, "the token is not valid", field: "auth.token")
            }
            guard let role = grant.workspaces[workspace] else {
                throw PanesError(.notAMember, "\(grant.user) is not a member of workspace `\(workspace)`",
                                 field: "workspace")
            }
            return Identity(user: grant.user, name: grant.name, role: role)
        case (.verified, .name):
            throw PanesError(.unauthenticated, "this server requires `auth.token` (a signed token)", field: "auth.token")
        case (.verified(let verifier), .token(let token)):
            let verified: VerifiedToken
            do {
                verified = try verifier.verify(token, now: now)
            } catch {
                var error = error
                error.field = error.field ?? "auth.token"
                throw error
            }
            guard verified.service == nil else {
                throw PanesError(.unauthenticated, "this token has the service role (`panes.service`): it acts through "
                                     + "the HTTP API (/api/v1), not as a window", field: "auth.token")
            }
            guard let role = verified.workspaces[workspace] else {
                throw PanesError(.notAMember, "\(verified.user) is not a member of workspace `\(workspace)`",
                                 field: "workspace")
            }
            return Identity(user: verified.user, name: verified.name, role: role, expiresAt: verified.expiresAt)
        }
    }

    /// Reads a tokens file: `{"tokens":[{"token":…,"user":…,"name":…,"workspaces":{"acme":"owner"}}]}`.
    public static func tokens(json: JSONValue) throws(PanesError) -> Authenticator {
        guard let list = json["tokens"]?.arrayValue else { throw .missing("tokens") }
        var grants: [Identifier: TokenGrant] = [:]
        for (index, entry) in list.enumerated() {
            guard case .object(let object) = entry else { throw .invalid("tokens[\(index)]", "must be an object") }
            let fields = FieldReader(object, prefix: "tokens[\(index)]")
            let token = try fields.requiredString("token", maxLength: 512)
            let user = try fields.requiredString("user", maxLength: 64)
            guard MessageDecoder.isName(user) else { throw .invalid("tokens[\(index)].user", "must be a plain name") }
            var workspaces: [Identifier: Role] = [:]
            for (workspace, role) in try fields.object("workspaces") ?? [:] {
                guard let role = role.stringValue.flatMap(Role.init(rawValue:)) else {
                    throw .invalid("tokens[\(index)].workspaces.\(workspace)", "must be `owner`, `editor` or `viewer`")
                }
                workspaces[workspace] = role
            }
            guard grants[token] == nil else { throw .invalid("tokens[\(index)].token", "is listed twice") }
            grants[token] = TokenGrant(user: user, name: try fields.string("name", maxLength: 64) ?? user,
                                       workspaces: workspaces)
        }
        return .tokens(grants)
    }
}
