/// Who may use the HTTP API, and how often: finds a request's principal (`APIPrincipal`) from
/// its bearer credential, an API key (by the hash of its secret) or a JWT checked like a
/// scene's (`verify`), checks the route against it, and holds each key and each token subject
/// to its rate (`apiRateLimitPerSecond`, `apiRateLimitBurst`). Pure; owned by the service thread.
///
/// The rate is the cluster's: with `nodes` live nodes (the heartbeat's count) each node admits
/// its share, rate and burst divided by `nodes`, so a key spread over the cluster by the load
/// balancer gets the limit in total, with no database round trip per request.
public struct APIGate: Sendable {
    public private(set) var keyring: APIKeyring
    /// By `APIPrincipal.budget`, compared by bytes (a token's `sub` is any string).
    private var buckets: [Identifier: TokenBucket] = [:]
    /// How many buckets there were after the last pruning: the next comes at twice as many.
    private var prunedAt = 0
    private let rate: Int
    private let burst: Int
    private let hash: @Sendable (String) -> String
    /// The live nodes of the cluster this node knows of (itself included); 1 alone.
    public private(set) var nodes = 1

    public init(keyring: APIKeyring, settings: Settings, hash: @escaping @Sendable (String) -> String) {
        self.keyring = keyring
        rate = settings.apiRateLimitPerSecond
        burst = settings.apiRateLimitBurst
        self.hash = hash
    }

    /// New keys (the file was read again): keys that are gone stop working now; a key kept
    /// keeps its bucket.
    public mutating func replace(_ keyring: APIKeyring) {
        self.keyring = keyring
        let ids = Set(keyring.keys.map { Identifier("key:\($0.id)") })
        buckets = buckets.filter { !$0.key.rawValue.hasPrefix("key:") || ids.contains($0.key) }
    }

    /// The cluster has `count` live nodes now: this node's share of each budget follows.
    public mutating func setNodes(_ count: Int) {
        let count = max(1, count)
        guard count != nodes else { return }
        nodes = count
        let (rate, burst) = share
        for key in Array(buckets.keys) { buckets[key]?.rescale(rate: rate, burst: burst) }
    }

    /// This node's part of a budget: the rate and burst over the live nodes; a burst of at
    /// least one, so every node can still admit a request.
    var share: (rate: Double, burst: Double) {
        (Double(rate) / Double(nodes), max(1, Double(burst) / Double(nodes)))
    }

    /// The principal a request acts as, with its role in the route's workspace, or the error
    /// that refuses it: `unauthenticated` (401) or `token_expired` (401) without a valid key or
    /// token, `forbidden` (403) or `not_a_member` (403) for a route it may not take,
    /// `rate_limited` (429) over its rate.
    /// - Parameters:
    ///   - authorization: the `Authorization` header.
    ///   - verify: checks a JWT as `--auth jwt` checks a scene's (keys, claims, the limit on
    ///     failed authentications per address); nil when the server takes no JWTs.
    public mutating func admit(authorization: String?, route: APIRoute, now: Millis,
                               verify: ((String) throws(PanesError) -> VerifiedToken)? = nil)
        throws(PanesError) -> (principal: APIPrincipal, role: Role) {
        let principal = try identify(authorization, verify: verify)
        let role = try principal.role(for: route)
        let (rate, burst) = share
        let budget = Identifier(principal.budget)
        var bucket = buckets[budget] ?? TokenBucket(rate: rate, burst: burst, now: now)
        let (allowed, retryAfter) = bucket.take(now: now)
        buckets[budget] = bucket
        prune(now: now)
        guard allowed else {
            throw PanesError(.rateLimited, "\(principal.described) is over \(self.rate) requests a second across the cluster "
                                 + "(setting `apiRateLimitPerSecond`; this node's share of \(nodes))", retryAfterMs: retryAfter)
        }
        return (principal, role)
    }

    /// The key or token the header carries. A secret that is a known key's is that key; one
    /// shaped like a JWT (three dot-separated parts) goes to `verify`.
    func identify(_ authorization: String?, verify: ((String) throws(PanesError) -> VerifiedToken)?)
        throws(PanesError) -> APIPrincipal {
        guard let authorization, !authorization.isEmpty else {
            throw PanesError(.unauthenticated, "send an API key or a token: `Authorization: Bearer <secret>`")
        }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw PanesError(.unauthenticated, "the `Authorization` header must be `Bearer <secret>`")
        }
        let secret = String(parts[1]).trimmingSpaces
        if let key = keyring.key(hash: hash(secret)) { return APIPrincipal(.key(key)) }
        guard secret.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 else {
            throw PanesError(.unauthenticated, "the API key is not valid (unknown, or revoked)")
        }
        guard let verify else {
            throw PanesError(.unauthenticated, "this server takes no tokens (it runs without `--auth jwt`); send an API key")
        }
        let token = try verify(secret)
        if let scope = token.service { return APIPrincipal(.service(token, scope)) }
        return APIPrincipal(.user(token))
    }

    /// Drops buckets that are full again (idle for long enough): they are what a new bucket
    /// would be, so nothing is forgotten. Runs when the count doubled since the last time, so
    /// its cost per request stays constant however many subjects come and go.
    private mutating func prune(now: Millis) {
        guard buckets.count > max(64, 2 * prunedAt) else { return }
        buckets = buckets.filter { !$0.value.isFull(now: now) }
        prunedAt = buckets.count
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first == " " || scalars.first == "\t" { scalars = scalars.dropFirst() }
        while scalars.last == " " || scalars.last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}

extension PanesError {
    /// The HTTP status an API answer with this error has.
    public var httpStatus: Int {
        switch code {
        case .unknownType: 404
        case .tooLarge: 413
        case .tooMany, .typeMismatch, .keyPathConflict, .invalidOperation, .idempotencyKeyReused: 422
        case .sessionNotFound, .documentNotFound, .sceneNotFound, .observationNotFound, .dragNotFound, .ticketInvalid: 404
        case .versionConflict, .revisionInFuture, .dragAlreadyDropped, .documentNotOpen: 409
        case .revisionUnavailable: 410
        case .unauthenticated, .tokenExpired: 401
        case .notAMember, .forbidden, .preferenceLocked: 403
        case .rateLimited: 429
        case .serverDraining, .storageFailed, .outcomeUnknown: 503
        case .internalError: 500
        default: 400
        }
    }
}
