public import PanesCore

/// `--auth jwt`: accepts tokens an application signs for its users, checked against the key
/// file's keys, issuer and audience.
///
/// In order, and refusing at the first failure: the token's shape; its header (`alg: none`
/// never; a `kid` naming a configured key; `alg` equal to that key's algorithm; no `crit`);
/// the signature, through libjwt; then the claims (`iss`, `aud`, `exp`, `nbf` with
/// `jwtClockSkewMs` of tolerance, `sub`, `name`, `panes.workspaces`). Keys come only from the
/// key file: `jku`, `jwk`, `x5u` and `x5c` headers are ignored.
///
/// The claims a token carries:
///
/// ```json
/// {"iss": "https://app.example.com", "aud": "panes", "sub": "u_42", "name": "Alice",
///  "exp": 1767225600, "nbf": 1767222000,
///  "panes": {"workspaces": {"team": "editor", "acme": "viewer"}}}
/// ```
///
/// A token for the application's backend has the service role instead: `panes.service` with
/// the workspaces it may act in and its access, as an API key's entry has them, and no
/// `panes.workspaces`. It is accepted by the HTTP API only (`APIGate`), never by `connect`:
///
/// ```json
/// {"iss": "https://app.example.com", "aud": "panes", "sub": "crm-backend", "exp": 1767225600,
///  "panes": {"service": {"workspaces": ["acme"], "access": "write"}}}
/// ```
public struct JWTVerifier: TokenVerifier {
    public let configuration: JWTConfiguration
    public let clockSkewMs: Int
    /// Signature outcomes by token (`jwtCacheEntries`); the claims are checked on every use.
    let cache: VerificationCache

    /// Longest `sub` and `name`, in bytes.
    static let maxNameBytes = 128

    /// - Parameter cacheEntries: how many tokens' signature outcomes to keep; 0 keeps none.
    public init(configuration: JWTConfiguration, clockSkewMs: Int, cacheEntries: Int = 0) {
        self.configuration = configuration
        self.clockSkewMs = clockSkewMs
        self.cache = VerificationCache(capacity: cacheEntries)
    }

    public func verify(_ token: String, now: Millis) throws(PanesError) -> VerifiedToken {
        let outcome = cache.outcome(for: token) { () throws(PanesError) -> JSONObject in
            let parts = try JWTParts(token)
            let key = try key(for: parts.header)
            try JWTSignature.verify(token, parts: parts, key: key)
            return parts.claims
        }
        switch outcome {
        case .signed(let claims): return try identity(claims, now: now)
        case .refused(let error): throw error
        }
    }

    /// The configured key the header names, if the header asks for exactly its algorithm.
    func key(for header: JSONObject) throws(PanesError) -> JWTKey {
        guard case .string(let alg)? = header["alg"] else { throw JWTParts.refused("header has no `alg`") }
        guard alg.lowercased() != "none" else {
            throw JWTParts.refused("is unsigned (`alg: none`); unsigned tokens are never accepted")
        }
        if let crit = header["crit"] {
            throw JWTParts.refused("header has `crit` (\(crit.typeName)); no critical extensions are supported")
        }
        if let typ = header["typ"] {
            guard typ.stringValue?.uppercased() == "JWT" else { throw JWTParts.refused("header's `typ` is not `JWT`") }
        }
        guard case .string(let kid)? = header["kid"] else {
            throw JWTParts.refused("header has no `kid`; sign with one of the configured key ids")
        }
        guard let key = configuration.keys[Identifier(kid)] else {
            throw JWTParts.refused("names key `\(kid.prefix(128))`, which is not configured")
        }
        guard Identifier.equal(alg, key.algorithm.rawValue) else {
            throw JWTParts.refused("says `alg: \(alg.prefix(16))`, but key `\(kid)` is for \(key.algorithm.rawValue) only")
        }
        return key
    }

    /// The identity in verified claims, if they are for this server and valid at `now`.
    func identity(_ claims: JSONObject, now: Millis) throws(PanesError) -> VerifiedToken {
        // StringOrURI values compare without any transformation (RFC 7519 §2): by bytes.
        guard let issuer = claims["iss"]?.stringValue, Identifier.equal(issuer, configuration.issuer) else {
            throw JWTParts.refused("is not from the configured issuer (`iss`)")
        }
        let audiences: [JSONValue] = switch claims["aud"] {
        case .string?: [claims["aud"]!]
        case .array(let list)?: list
        default: []
        }
        guard audiences.contains(where: { $0.stringValue.map { Identifier.equal($0, configuration.audience) } == true }) else {
            throw JWTParts.refused("is not for this server (`aud` lacks `\(configuration.audience)`)")
        }
        let skew = Millis(clockSkewMs)
        guard let expiresAt = try Self.time(claims, "exp") else {
            throw JWTParts.refused("has no `exp`; tokens without an expiry are not accepted")
        }
        guard now < expiresAt + skew else {
            throw PanesError(.tokenExpired, "the token expired at \(expiresAt) (`exp`); the server's clock says \(now)")
        }
        if let notBefore = try Self.time(claims, "nbf"), now + skew < notBefore {
            throw JWTParts.refused("is not valid before \(notBefore) (`nbf`); the server's clock says \(now)")
        }
        guard let user = try Self.name(claims, "sub") else { throw JWTParts.refused("has no `sub` (the user id)") }
        let name = try Self.name(claims, "name") ?? user
        if let service = try Self.service(claims) {
            return VerifiedToken(user: user, name: name, workspaces: [:], expiresAt: expiresAt, service: service)
        }
        return VerifiedToken(user: user, name: name, workspaces: try Self.workspaces(claims), expiresAt: expiresAt)
    }

    /// A NumericDate claim (seconds since the epoch, possibly fractional) in milliseconds.
    static func time(_ claims: JSONObject, _ claim: String) throws(PanesError) -> Millis? {
        guard let value = claims[claim] else { return nil }
        guard let seconds = value.doubleValue, seconds.isFinite, seconds >= 0, seconds < 1e13 else {
            throw JWTParts.refused("has a `\(claim)` that is not a time in seconds since 1970")
        }
        return Millis((seconds * 1000).rounded(.down))
    }

    /// A user id or display name: 1 to `maxNameBytes` bytes, no control characters.
    static func name(_ claims: JSONObject, _ claim: String) throws(PanesError) -> String? {
        guard let value = claims[claim] else { return nil }
        guard case .string(let string) = value, !string.isEmpty, string.utf8.count <= maxNameBytes,
              !string.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw JWTParts.refused("has a `\(claim)` that is not a string of 1 to \(maxNameBytes) bytes without control characters")
        }
        return string
    }

    /// `panes.service`: the service role's scope; nil for a user's token. A token is one or the
    /// other: one with both `panes.service` and `panes.workspaces` is refused.
    static func service(_ claims: JSONObject) throws(PanesError) -> APIScope? {
        guard case .object(let panes)? = claims["panes"], let claim = panes["service"] else { return nil }
        guard case .object(let object) = claim else { throw JWTParts.refused("has a `panes.service` that is not an object") }
        guard panes["workspaces"] == nil else {
            throw JWTParts.refused("has both `panes.service` and `panes.workspaces`; a token is a service's or a user's")
        }
        // By bytes, as the fields are read (CONCEPTS.md, invariant 10).
        if let unknown = object.keys.first(where: { !Identifier.equal($0, "workspaces") && !Identifier.equal($0, "access") }) {
            throw JWTParts.refused("has `panes.service.\(unknown.prefix(64))`, which is not known (known: access, workspaces)")
        }
        do throws(PanesError) {
            return try APIScope(FieldReader(object, prefix: "panes.service"))
        } catch {
            throw JWTParts.refused("has a `panes.service` that is not valid: \(error.message)")
        }
    }

    /// `panes.workspaces`: workspace name to role.
    static func workspaces(_ claims: JSONObject) throws(PanesError) -> [Identifier: Role] {
        guard case .object(let panes)? = claims["panes"], case .object(let list)? = panes["workspaces"] else {
            throw JWTParts.refused("has no `panes.workspaces` object (workspace name to role)")
        }
        var workspaces: [Identifier: Role] = [:]
        for (workspace, role) in list {
            guard let role = role.stringValue.flatMap(Role.init(rawValue:)) else {
                throw JWTParts.refused("gives workspace `\(workspace.prefix(64))` a role that is not `owner`, `editor` or `viewer`")
            }
            workspaces[workspace] = role
        }
        return workspaces
    }
}
