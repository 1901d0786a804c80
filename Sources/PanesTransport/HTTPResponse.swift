/// An HTTP response the server writes: a status, a content type, extra headers (`Retry-After`,
/// `ETag`, `Location`…) and a body, written in pieces when it is large. Files under
/// `webRoot` are served by lws itself.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    /// Extra headers, names lower case. A name that is not an HTTP token, or a value with a
    /// control character (a CR or LF would let it add headers of its own), is left out when
    /// the response is written, and logged.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int = 200, contentType: String = "text/plain; charset=utf-8", body: String) {
        self.init(status: status, contentType: contentType, headers: [], body: Array(body.utf8))
    }

    public init(status: Int, contentType: String, headers: [(name: String, value: String)] = [], body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    /// A JSON body, `application/json`.
    public static func json(_ status: Int, _ body: [UInt8], headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", headers: headers, body: body)
    }

    /// Whether a header may be written as given: a token for a name, no control characters
    /// (but tab) in the value.
    static func isWritable(name: String, value: String) -> Bool {
        let tokenSymbols = Set("!#$%&'*+-.^_`|~".utf8)
        guard !name.isEmpty, name.utf8.allSatisfy({ byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) || tokenSymbols.contains(byte)
        }) else { return false }
        return value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }
}
