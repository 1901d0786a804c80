/// Who an HTTP API request speaks for, once its bearer credential checked out (`APIGate`):
///
/// - an API key or a JWT with the service role is **the backend**: in the workspaces of its
///   scope it acts as a workspace owner (every document, sharing included), read-only when its
///   access is `read`; its writes are authored by its own actor (`api:<key id>`,
///   `service:<sub>`);
/// - a JWT of an ordinary user acts **as that user**: their role in the workspace from the
///   token (`panes.workspaces`), and per document the same rights a window of theirs has
///   (grants, `none`, creator), checked by the same hub code.
public struct APIPrincipal: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case key(APIKey)
        case service(VerifiedToken, APIScope)
        case user(VerifiedToken)
    }

    public var kind: Kind

    public init(_ kind: Kind) { self.kind = kind }

    /// The user the request acts as (unless the route names another, for the backend), and
    /// the author of its edits.
    public var actor: String {
        switch kind {
        case .key(let key): key.actor
        case .service(let token, _): "service:\(token.user)"
        case .user(let token): token.user
        }
    }

    public var name: String {
        switch kind {
        case .key(let key): key.name
        case .service(let token, _), .user(let token): token.name
        }
    }

    /// The backend's scope; nil for a user's token.
    public var scope: APIScope? {
        switch kind {
        case .key(let key): key.scope
        case .service(_, let scope): scope
        case .user: nil
        }
    }

    /// What rate limits count against: the key, or the token's `sub` (every token of one
    /// subject shares one budget).
    public var budget: String {
        switch kind {
        case .key(let key): "key:\(key.id)"
        case .service(let token, _), .user(let token): "sub:\(token.user)"
        }
    }

    /// Names it in errors.
    public var described: String {
        switch kind {
        case .key(let key): "API key `\(key.id)`"
        case .service(let token, _): "service token of `\(token.user.prefix(64))`"
        case .user(let token): "the token of user `\(token.user.prefix(64))`"
        }
    }

    /// The role it has in the route's workspace, or the error that refuses the route:
    /// `forbidden` for a workspace or a write outside the backend's scope, or for a user's
    /// token naming another user; `not_a_member` for a user outside the workspace. Per-document
    /// rights are the hub's to check, request by request.
    public func role(for route: APIRoute) throws(PanesError) -> Role {
        switch kind {
        case .key, .service:
            return try Self.backendRole(scope ?? APIScope(workspaces: [], access: .read), route: route, described)
        case .user(let token):
            guard let role = token.workspaces[route.workspace] else {
                throw PanesError(.notAMember, "\(token.user.prefix(64)) is not a member of workspace `\(route.workspace)`",
                                 field: "workspace")
            }
            if let user = route.user, !Identifier.equal(user, token.user) {
                throw PanesError(.forbidden, "\(described) acts for that user only, not for `\(user)`; the backend "
                                     + "(an API key or a service token) acts for any user", field: "user")
            }
            return role
        }
    }

    private static func backendRole(_ scope: APIScope, route: APIRoute, _ described: String) throws(PanesError) -> Role {
        guard scope.covers(route.workspace) else {
            throw PanesError(.forbidden, "\(described) may not act in workspace `\(route.workspace)`")
        }
        if route.writes, scope.access != .write {
            throw PanesError(.forbidden, "\(described) is read-only; this request writes")
        }
        return .owner
    }
}
