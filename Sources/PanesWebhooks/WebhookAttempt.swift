/// One POST to a receiver and how it went.
public struct WebhookRequest: Sendable {
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    public var connectTimeoutMs: Int
    public var timeoutMs: Int
    /// Bytes of the answer kept; reading stops there (a 2xx still counts).
    public var maxResponseBytes: Int

    public init(url: String, headers: [(name: String, value: String)], body: [UInt8], connectTimeoutMs: Int,
                timeoutMs: Int, maxResponseBytes: Int) {
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeoutMs = connectTimeoutMs
        self.timeoutMs = timeoutMs
        self.maxResponseBytes = maxResponseBytes
    }
}

public struct WebhookResponse: Sendable {
    public enum Outcome: Sendable, Equatable {
        /// The receiver answered with this status (redirects are not followed).
        case status(Int, retryAfterMs: Int64?)
        /// No answer within `webhookTimeoutMs` (or no connection within `webhookConnectTimeoutMs`).
        case timedOut
        /// No connection: refused, unreachable, the name did not resolve.
        case unreachable(String)
        /// TLS failed: the certificate did not verify, the handshake broke.
        case tls(String)
        case failed(String)
    }

    public var outcome: Outcome
    /// The start of the answer's body, for inspection.
    public var body: [UInt8]
    public var durationMs: Int64

    public init(outcome: Outcome, body: [UInt8] = [], durationMs: Int64 = 0) {
        self.outcome = outcome
        self.body = body
        self.durationMs = durationMs
    }

    /// The label counted in `panes_webhook_attempts_total`.
    public var label: String {
        switch outcome {
        case .status(let code, _) where (200..<300).contains(code): "delivered"
        case .status: "http_error"
        case .timedOut: "timeout"
        case .unreachable: "unreachable"
        case .tls: "tls_error"
        case .failed: "error"
        }
    }

    public static let labels = ["delivered", "http_error", "timeout", "unreachable", "tls_error", "error"]
}
