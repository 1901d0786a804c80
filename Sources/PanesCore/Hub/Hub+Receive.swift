/// A frame's way into the hub: the connection's rate bucket, then its request decoded from
/// the frame's tree (or already read from its text) and dispatched; a frame that never became a
/// request is refused. The service thread's, like all of the hub.
extension Hub {
    mutating func receive(_ json: JSONValue, on connectionID: ConnectionID) {
        guard case .admitted(let allowed, let retryAfter, let phase) = admit(connectionID) else { return }
        let request: ClientRequest
        switch decoder.decode(json) {
        case .failure(let failure):
            if let id = failure.id { receivedRequest = (id, failure.typeIndex) }
            // Requests that did not decode are counted together: their `type` is the client's
            // text and must not grow the metric's label space.
            metrics.countRequest(named: "(invalid)")
            if !allowed {
                fail(failure.id, request: nil, rateLimited(retryAfter), to: connectionID)
            } else {
                fail(failure.id, request: failure.type, failure.error, to: connectionID)
            }
            return
        case .success(let decoded):
            request = decoded
            receivedRequest = (decoded.id, decoded.typeIndex)
        }
        admitted(request, on: connectionID, phase: phase, allowed: allowed, retryAfter: retryAfter)
    }

    /// A request read from its frame's text without a tree (`HubEvent.request`): what
    /// `receive(_:on:)` does with the request its tree decodes to.
    mutating func receive(_ request: ClientRequest, on connectionID: ConnectionID) {
        guard case .admitted(let allowed, let retryAfter, let phase) = admit(connectionID) else { return }
        receivedRequest = (request.id, request.typeIndex)
        admitted(request, on: connectionID, phase: phase, allowed: allowed, retryAfter: retryAfter)
    }

    /// A decoded request on a connection that may send it (`admit`); `allowed` false when it
    /// is over its rate, and then refused. `phase`: the connection's, as `admit` read it.
    private mutating func admitted(_ request: ClientRequest, on connectionID: ConnectionID, phase: Connection.Phase,
                                   allowed: Bool, retryAfter: Int) {
        metrics.countRequest(request)
        guard allowed else {
            fail(request.id, request: request.type, rateLimited(retryAfter), to: connectionID)
            return
        }
        dispatch(request, on: connectionID, phase: phase)
    }

    /// A frame that never became a request (not JSON, too deep, a number out of range). It
    /// still counts against the connection's rate limit: a flood of garbage is a flood.
    mutating func refuse(_ error: PanesError, on connectionID: ConnectionID) {
        guard case .admitted(let allowed, let retryAfter, _) = admit(connectionID) else { return }
        metrics.countRequest(named: "(unreadable)")
        fail(nil, request: nil, allowed ? error : rateLimited(retryAfter), to: connectionID)
    }

    /// `Connections.admit` at the settings' rate limit.
    mutating func admit(_ connectionID: ConnectionID) -> Connections.Admission {
        connections.admit(connectionID, now: monotonic(), rate: Double(settings.rateLimitPerSecond),
                          burst: Double(settings.rateLimitBurst))
    }

    func rateLimited(_ retryAfter: Int) -> PanesError {
        PanesError(.rateLimited, "over \(settings.rateLimitPerSecond) requests a second (setting `rateLimitPerSecond`)",
                   retryAfterMs: retryAfter)
    }
}
