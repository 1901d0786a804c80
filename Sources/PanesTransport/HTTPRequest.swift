/// One HTTP request under `TransportConfiguration.apiPath`, read whole: what the delegate
/// needs to route, authenticate and answer it. Plain values, safe to hand to other threads.
///
/// The path is as lws leaves it: percent-decoded (so `%2F` reads as `/`), with `//`, `/./` and
/// `/../` folded, and without the query. Every string here was checked to be valid UTF-8.
public struct HTTPRequest: Sendable {
    /// Answer with `WebSocketServer.respond(to:with:)`. Unique for the server's lifetime.
    public let id: UInt64
    public let method: HTTPMethod
    public let path: String
    /// `name=value` pairs in order, percent-decoded, `+` read as a space. A pair without `=`
    /// has an empty value.
    public let query: [HTTPQueryItem]
    /// The headers in `HTTPRequest.headerNames` that the request carried, by lower-case name.
    /// A header sent twice reads as its values joined by a space (lws joins them).
    public let headers: [String: String]
    public let body: [UInt8]
    /// The client's address (`PeerAddress.client`: behind a trusted proxy, the one it
    /// forwarded), for logs and the limit on failed authentications per address.
    public let peer: String

    public init(id: UInt64, method: HTTPMethod, path: String, query: [HTTPQueryItem] = [],
                headers: [String: String] = [:], body: [UInt8] = [], peer: String = "") {
        self.id = id
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.peer = peer
    }

    /// The headers the transport copies out of lws for the API (lws keeps a request's headers
    /// only while it parses them). Lower case, as HTTP compares them.
    public static let headerNames = [
        "host", "origin", "authorization", "content-type", "accept", "if-match", "if-none-match",
        "idempotency-key", "user-agent",
    ]

    /// The first value of a query parameter.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

public struct HTTPQueryItem: Sendable, Equatable {
    public let name: String
    public let value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
