// Threading: the service thread's, like the rest of the runtime's delegate methods.
import PanesCore
import PanesJSON
public import PanesTransport

/// The HTTP API's side of the runtime: what it answers for the requests under `/api` and
/// for the ones the transport refuses. The API's routes (documents, preferences, sessions,
/// rights) are not served yet: every API request gets 404 with the protocol's error object.
extension ServerRuntime {
    public func serverDidReceiveHTTPRequest(_ request: HTTPRequest) {
        let error = PanesError(.unknownType, "no API route \(request.method.rawValue) \(request.path)")
        transport.respond(to: request.id, with: Self.errorResponse(404, error))
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

    public func serverHTTPRequestAbandoned(_ id: UInt64) {}

    /// `{"error": {...}}`, the error object of a WebSocket reply, as an HTTP body.
    static func errorResponse(_ status: Int, _ error: PanesError) -> HTTPResponse {
        .json(status, JSONCodec.encode(.object(["error": error.json])))
    }
}
