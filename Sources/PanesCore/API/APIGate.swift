/// Who may use the HTTP API, and how often: finds a request's key by the hash of its bearer
/// secret, checks the key's workspaces and access, and holds each key to its rate
/// (`apiRateLimitPerSecond`, `apiRateLimitBurst`). Pure; owned by the service thread.
public struct APIGate: Sendable {
    public private(set) var keyring: APIKeyring
    private var buckets: [Identifier: TokenBucket] = [:]
    private let rate: Int
    private let burst: Int
    private let hash: @Sendable (String) -> String

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
        let ids = Set(keyring.keys.map { Identifier($0.id) })
        buckets = buckets.filter { ids.contains($0.key) }
    }

    /// The key a request may act with, or the error that refuses it: `unauthenticated` (401)
    /// without a valid key, `forbidden` (403) for a workspace or a write the key does not
    /// cover, `rate_limited` (429) over its rate.
    /// - Parameter authorization: the `Authorization` header.
    public mutating func admit(authorization: String?, route: APIRoute, now: Millis) throws(PanesError) -> APIKey {
        guard let authorization, !authorization.isEmpty else {
            throw PanesError(.unauthenticated, "send an API key: `Authorization: Bearer <secret>`")
        }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw PanesError(.unauthenticated, "the `Authorization` header must be `Bearer <secret>`")
        }
        guard let key = keyring.key(hash: hash(String(parts[1]).trimmingSpaces)) else {
            throw PanesError(.unauthenticated, "the API key is not valid (unknown, or revoked)")
        }
        guard key.covers(route.workspace) else {
            throw PanesError(.forbidden, "API key `\(key.id)` may not act in workspace `\(route.workspace)`")
        }
        if route.writes, key.access != .write {
            throw PanesError(.forbidden, "API key `\(key.id)` is read-only; this request writes")
        }
        var bucket = buckets[Identifier(key.id)] ?? TokenBucket(rate: rate, burst: burst, now: now)
        let (allowed, retryAfter) = bucket.take(now: now)
        buckets[Identifier(key.id)] = bucket
        guard allowed else {
            throw PanesError(.rateLimited, "API key `\(key.id)` is over \(rate) requests a second "
                                 + "(setting `apiRateLimitPerSecond`)", retryAfterMs: retryAfter)
        }
        return key
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
