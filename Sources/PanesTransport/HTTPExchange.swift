/// One HTTP request on a connection and its answer, from the request line to the last byte
/// written. Touched only on the service thread.
///
/// A connection carries one exchange at a time: from the end of a request until its answer is
/// written the transport does not read the connection (lws rx flow control), so a pipelined
/// request waits, unread, until the answer before it is out, and requests are answered in the
/// order they came.
final class HTTPExchange {
    enum Phase {
        /// The body is arriving (`LWS_CALLBACK_HTTP_BODY`).
        case receivingBody
        /// Handed to the delegate; waiting for `respond(to:with:)` or the deadline.
        case awaitingAnswer(deadline: UInt64)
        /// The response is being written, a piece per turn of the write pump.
        case writing
        /// A refusal is out and the connection is closing: what the peer still sends is read
        /// and dropped until it closes or `until` passes, so unread bytes do not make the
        /// kernel reset the connection before the peer has read the refusal.
        case lingering(until: UInt64)
    }

    let id: UInt64
    let wsi: OpaquePointer
    var phase: Phase
    /// The request as far as it is known (the body is added as it arrives).
    var method: HTTPMethod?
    /// The method as the request line spelled it, for refusals and logs.
    let methodName: String
    let path: String
    var query: [HTTPQueryItem] = []
    var headers: [String: String] = [:]
    var body: [UInt8] = []
    let peer: String
    /// Counts against `maxHTTPRequestsInFlight` (API requests, until their answer is written).
    var counted: Bool
    var readingPaused = false
    /// `LWS_CALLBACK_HTTP_BODY_COMPLETION`s seen: more than one means lws is looping.
    var bodyCompletions = 0

    /// HEAD: the response's headers without its body.
    var headersOnly = false
    /// Close the connection once the response is out (a refusal whose body was not read).
    var closeAfter = false
    /// The response's bytes, headers and body, and how many are on the socket.
    var output: [UInt8] = []
    var written = 0
    /// When a piece last went out (`idlePingMilliseconds` without one drops the connection).
    var lastProgress: UInt64 = 0

    init(id: UInt64, wsi: OpaquePointer, methodName: String, path: String, peer: String, counted: Bool) {
        self.id = id
        self.wsi = wsi
        self.methodName = methodName
        self.path = path
        self.peer = peer
        self.counted = counted
        phase = .receivingBody
    }

    var isAwaitingAnswer: Bool {
        if case .awaitingAnswer = phase { return true }
        return false
    }
}
