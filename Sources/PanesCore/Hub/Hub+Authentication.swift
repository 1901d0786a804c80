/// Every credential a scene presents (`connect`, `refreshToken`) goes through here, so failed
/// ones are limited per peer address (issue 26, item 5; `AuthFailureLimiter`): from an address
/// that failed `authFailureBurst` times lately, a token is refused before it is checked, and a
/// flood of forged tokens costs the server a lookup each instead of a signature verification.
/// `--auth open` never refuses a name, so it skips all of this.
extension Hub {
    /// The identity behind `credentials` in `workspace`.
    /// - Throws: the authenticator's refusal (which counts against the connection's address),
    ///   or, unchecked, `rate_limited` with `retryAfterMs` when that address failed too often.
    mutating func authenticate(_ credentials: ConnectRequest.Credentials, workspace: String,
                               on connection: ConnectionID) throws(PanesError) -> Authenticator.Identity {
        let peer = authenticator.refusesCredentials ? connections[connection]?.peer : nil
        let (authenticator, now) = (authenticator, now())
        return try limitingFailures(from: peer, field: "auth.token", tells: true) { () throws(PanesError) in
            try authenticator.authenticate(credentials, workspace: workspace, now: now)
        }
    }

    /// Runs a check of a credential from `peer`, unless that address failed too often lately
    /// (then `rate_limited`, unchecked); a failed check counts against the address.
    /// `tells`: the refusal counts as telling the address when to come back, after which its
    /// new connections are closed at accept (`closesAtAccept`). A scene's refusal does; the
    /// HTTP API's does not, so a backend's API key from an address whose tokens failed still
    /// gets through, as API keys never count against an address.
    private mutating func limitingFailures<T>(from peer: String?, field: String?, tells: Bool,
                                              _ check: () throws(PanesError) -> T) throws(PanesError) -> T {
        if let peer, let retryAfter = tells ? authFailures.refuse(peer, now: monotonic()) : authFailures.refusal(peer, now: monotonic()) {
            metrics.authenticationsLimited += 1
            throw PanesError(.rateLimited, "too many failed authentications from this address (settings `authFailureBurst`, "
                                 + "`authFailuresPerMinute`); this token was not checked: try again in \(retryAfter) ms",
                             field: field, retryAfterMs: retryAfter)
        }
        do throws(PanesError) {
            return try check()
        } catch {
            metrics.authenticationsFailed += 1
            if let peer { authFailures.failed(peer, now: monotonic()) }
            throw error
        }
    }

    /// Whether the server checks signed tokens (`--auth jwt`), which the HTTP API takes too.
    public var verifiesTokens: Bool {
        if case .verified = authenticator { return true }
        return false
    }

    /// A JWT presented to the HTTP API (`APIGate`), checked as a scene's: the same verifier,
    /// and the same limit on failed authentications per address, refusing unchecked from an
    /// address over it. `unauthenticated` when the server takes no tokens.
    public mutating func verifyAPIToken(_ token: String, peer: String?) throws(PanesError) -> VerifiedToken {
        guard case .verified(let verifier) = authenticator else {
            throw PanesError(.unauthenticated, "this server takes no tokens (it runs without `--auth jwt`); send an API key")
        }
        let now = now()
        return try limitingFailures(from: peer.flatMap { $0.isEmpty ? nil : $0 }, field: nil, tells: false) { () throws(PanesError) in
            try verifier.verify(token, now: now)
        }
    }

    /// Whether a new connection from `peer` is turned away before its WebSocket handshake: nil
    /// when it may come in, else the milliseconds until it may. The transport asks at every
    /// upgrade, so a limited address costs an HTTP refusal, not a handshake, a frame and its
    /// JSON; the answer tells the address, so its next attempts are closed at accept
    /// (`closesAtAccept`).
    public mutating func retryAfter(forPeer peer: String) -> Int? {
        guard authenticator.refusesCredentials, let retryAfter = authFailures.refuse(peer, now: monotonic()) else { return nil }
        metrics.authenticationsLimited += 1
        return retryAfter
    }

    /// Whether a connection from `peer` is closed as soon as it is accepted, before lws reads
    /// its request: the address is refused and was already answered so, with when to come
    /// back (a 429 with `Retry-After`, or `rate_limited` and 4012). Under a flood that ignores
    /// the answer, an attempt then costs the server an accept and a close, not the parsing of
    /// an HTTP request and a refusal written back.
    public mutating func closesAtAccept(peer: String) -> Bool {
        guard authenticator.refusesCredentials, authFailures.ignoresItsRefusal(peer, now: monotonic()) else { return false }
        metrics.authenticationsLimited += 1
        return true
    }

    /// Answers a `connect` refused unchecked, and closes its connection with 4012: a client
    /// that floods connects on one socket gets one refusal, not one per frame.
    mutating func refuseLimited(_ error: PanesError, requestID: RequestID, on connection: ConnectionID) {
        fail(requestID, request: ConnectRequest.type, error, to: connection)
        close(connection, .authenticationLimited,
              reason: "too many failed authentications from this address; retry in \(error.retryAfterMs ?? 0) ms")
    }
}
