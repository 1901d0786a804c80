/// Why the transport answered an API request itself, before or instead of the delegate. The
/// delegate turns it into a response body (the protocol's error object); the transport sets
/// the status and the headers the status needs (`Allow`, `Retry-After`).
public struct HTTPRefusal: Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// The `Origin` or `Host` is not one this server trusts (403).
        case forbiddenOrigin
        /// The method is not one the API uses (405).
        case methodNotAllowed
        /// A body without `Content-Length` (chunked, or none said), which lws cannot read (411).
        case lengthRequired
        /// `Content-Length` is over `maxHTTPBodyBytes` (413); refused before any of it is read.
        case bodyTooLarge(limit: Int)
        /// Malformed: a `Content-Length` that is not a number, a path or header that is not UTF-8 (400).
        case badRequest
        /// `maxHTTPRequestsInFlight` requests are already being read or answered (503).
        case overloaded(limit: Int)
        /// The delegate did not answer within `httpResponseTimeoutMs` (504). A write it was
        /// making may still be applied: the client cannot tell, and retries with its
        /// `Idempotency-Key`.
        case timedOut(afterMilliseconds: Int)
    }

    public let reason: Reason
    /// What was wrong, for people: the setting, the header, the method.
    public let detail: String
    /// The request the delegate was handed, for a timeout; nil when it never saw one.
    public let requestID: UInt64?
    public let method: String
    public let path: String

    public init(reason: Reason, detail: String, requestID: UInt64? = nil, method: String, path: String) {
        self.reason = reason
        self.detail = detail
        self.requestID = requestID
        self.method = method
        self.path = path
    }

    public var status: Int {
        switch reason {
        case .forbiddenOrigin: 403
        case .methodNotAllowed: 405
        case .lengthRequired: 411
        case .bodyTooLarge: 413
        case .badRequest: 400
        case .overloaded: 503
        case .timedOut: 504
        }
    }
}
