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
        if let peer, let retryAfter = authFailures.refusal(peer, now: monotonic()) {
            metrics.authenticationsLimited += 1
            throw PanesError(.rateLimited, "too many failed authentications from this address (settings `authFailureBurst`, "
                                 + "`authFailuresPerMinute`); this token was not checked: try again in \(retryAfter) ms",
                             field: "auth.token", retryAfterMs: retryAfter)
        }
        do throws(PanesError) {
            return try authenticator.authenticate(credentials, workspace: workspace, now: now())
        } catch {
            metrics.authenticationsFailed += 1
            if let peer { authFailures.failed(peer, now: monotonic()) }
            throw error
        }
    }

    /// Whether a new connection from `peer` is turned away before its WebSocket handshake: nil
    /// when it may come in, else the milliseconds until it may. The transport asks at every
    /// upgrade, so under a flood a limited address costs an HTTP refusal per attempt, not a
    /// handshake, a frame and its JSON.
    public mutating func retryAfter(forPeer peer: String) -> Int? {
        guard authenticator.refusesCredentials, let retryAfter = authFailures.refusal(peer, now: monotonic()) else { return nil }
        metrics.authenticationsLimited += 1
        return retryAfter
    }

    /// Answers a `connect` refused unchecked, and closes its connection with 4012: a client
    /// that floods connects on one socket gets one refusal, not one per frame.
    mutating func refuseLimited(_ error: PanesError, requestID: RequestID, on connection: ConnectionID) {
        fail(requestID, request: ConnectRequest.type, error, to: connection)
        close(connection, .authenticationLimited,
              reason: "too many failed authentications from this address; retry in \(error.retryAfterMs ?? 0) ms")
    }
}
