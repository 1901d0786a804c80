/// Checks a bearer token and says whose it is: the seam between the pure core, which decides
/// what a user may do, and the module that does the cryptography (`PanesSecurity`'s
/// `JWTVerifier` for `--auth jwt`). Tests can inject their own.
///
/// Called on the service thread for every `connect` and `refreshToken`, so it must be fast and
/// must not block; implementations hold immutable keys and are `Sendable`.
public protocol TokenVerifier: Sendable {
    /// The token's identity if it is valid at `now`.
    /// - Throws: `unauthenticated` for a token that is not valid (bad signature, wrong key,
    ///   audience or issuer, not yet valid, malformed), `token_expired` for one past its expiry.
    func verify(_ token: String, now: Millis) throws(PanesError) -> VerifiedToken
}

/// What a valid token says: who the user is, where they belong, and until when it holds.
public struct VerifiedToken: Sendable, Equatable {
    /// The stable user id (`sub`).
    public var user: String
    /// The display name (`name`, or the user id).
    public var name: String
    /// The user's role in each workspace they belong to, by the workspace's bytes.
    public var workspaces: [Identifier: Role]
    /// When the token stops being accepted (its `exp` plus the allowed clock skew), or nil
    /// for a token that does not expire.
    public var expiresAt: Millis?
    /// Set for a token with the service role (`panes.service`): it speaks for the application's
    /// backend through the HTTP API, with this scope, and names no workspaces of a user.
    public var service: APIScope?

    public init(user: String, name: String, workspaces: [Identifier: Role], expiresAt: Millis?, service: APIScope? = nil) {
        self.user = user
        self.name = name
        self.workspaces = workspaces
        self.expiresAt = expiresAt
        self.service = service
    }
}
