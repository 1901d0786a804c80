// Threading: the service thread's, like the rest of the runtime's delegate methods.
import Logging
import PanesCore
import PanesJSON
public import PanesTransport

/// The HTTP API's side of the runtime: a request under `/api/v1` is routed (`APIRoute`), its
/// key or token checked and counted (`APIGate`; a JWT by the hub's verifier, `verifyAPIToken`),
/// and handed to the hub as a service scene's request (`Hub+API.swift`) on a connection id of
/// its own. The hub's reply to it becomes the HTTP
/// answer, held like any frame until what it reports is durable (`emit`).
extension ServerRuntime {
    public func serverDidReceiveHTTPRequest(_ request: HTTPRequest) {
        let start = RuntimeMetrics.now
        defer { metrics.turn(since: start) }
        let call: APICall
        do throws(PanesError) {
            var body: JSONValue?
            if !request.body.isEmpty {
                let decoded = request.body.withUnsafeBytes { JSONCodec.decode($0, maxDepth: settings.maxJSONDepth) }
                switch decoded {
                case .success(let json): body = json
                case .failure(let error):
                    throw PanesError(.malformedJSON, "the body is not valid JSON: \(error.description)")
                }
            }
            let route = try APIRoute(method: request.method.rawValue, path: request.path,
                                 query: request.query.map { ($0.name, $0.value) }, body: body,
                                 idempotencyKey: request.headers["idempotency-key"],
                                 newOpId: "http-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
                                     + String(UInt64.random(in: 0...UInt64.max), radix: 36))
            let verify: ((String) throws(PanesError) -> VerifiedToken)? = hub.verifiesTokens
                ? { token throws(PanesError) in try self.hub.verifyAPIToken(token, peer: request.peer) } : nil
            let (principal, role) = try apiGate.admit(authorization: request.headers["authorization"], route: route,
                                                      now: Self.monotonicClock(), verify: verify)
            call = APICall(route: route, principal: principal, role: role)
        } catch {
            _ = transport.respond(to: request.id, with: Self.errorResponse(error.httpStatus, error))
            return
        }
        nextServiceConnection += 1
        let connection = ConnectionID(Hub.serviceConnectionBit | nextServiceConnection)
        apiRequests[connection.rawValue] = (request.id, call.route.successStatus)
        perform(hub.handle(.api(connection, call)))
    }

    /// The HTTP answer for the hub's reply to a service connection; nil for anything else sent
    /// to it (it observes nothing, so nothing else should come).
    func apiResponse(_ message: ServerMessage, to connection: UInt64) -> Output? {
        guard let pending = apiRequests[connection] else { return nil }
        switch message {
        case .reply(_, let result):
            apiRequests[connection] = nil
            return .http(pending.request, .json(pending.successStatus, JSONCodec.encode(result)))
        case .connected(_, let reply):
            apiRequests[connection] = nil
            return .http(pending.request, .json(pending.successStatus, JSONCodec.encode(reply.json)))
        case .failure(_, _, let error):
            apiRequests[connection] = nil
            return .http(pending.request, Self.errorResponse(error.httpStatus, error))
        case .event:
            return nil
        }
    }

    public func serverHTTPRefusalResponse(_ refusal: HTTPRefusal) -> HTTPResponse {
        let error = switch refusal.reason {
        case .forbiddenOrigin: PanesError(.forbidden, refusal.detail)
        case .methodNotAllowed: PanesError(.unknownType, refusal.detail)
        case .lengthRequired, .badRequest: PanesError(.invalidMessage, refusal.detail)
        case .bodyTooLarge: PanesError(.tooLarge, refusal.detail, field: "body")
        case .overloaded: PanesError(.rateLimited, refusal.detail, retryAfterMs: 1_000)
        case .timedOut: PanesError(.internalError, refusal.detail)
        }
        return Self.errorResponse(refusal.status, error)
    }

    /// The hub goes on with what the request started (a write is applied and kept); its
    /// answer finds no request and is dropped (`respond` returns false).
    public func serverHTTPRequestAbandoned(_ id: UInt64) {}

    /// SIGHUP: the API keys file is read again. A file that does not read keeps the old keys.
    public func serverDidReceiveReloadSignal() {
        guard let reloadAPIKeys else {
            logger.notice("SIGHUP: no API keys file to read again (--api-keys)")
            return
        }
        do {
            let keyring = try reloadAPIKeys()
            apiGate.replace(keyring)
            logger.notice("API keys read again", metadata: ["keys": "\(keyring.keys.map(\.id).joined(separator: ","))"])
        } catch {
            logger.error("the API keys file could not be read again; the keys stay as they were",
                         metadata: ["error": "\(error)"])
        }
    }

    /// `{"error": {...}}`, the error object of a WebSocket reply, as an HTTP body, with
    /// `Retry-After` when the error says when to come back.
    static func errorResponse(_ status: Int, _ error: PanesError) -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if let retry = error.retryAfterMs { headers.append(("retry-after", String(max(1, (retry + 999) / 1_000)))) }
        if status == 401 { headers.append(("www-authenticate", "Bearer realm=\"panes\"")) }
        return .json(status, JSONCodec.encode(.object(["error": error.json])), headers: headers)
    }
}
