public import Logging

/// How the WebSocket server listens and what it accepts. Plain values: built by the command
/// line from the server's settings.
public struct TransportConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; read the real one from `WebSocketServer.port`.
    public var port: Int
    /// Served at `/`; nil serves no files.
    public var webRoot: String?
    public var subprotocol: String
    /// The only path that upgrades to a WebSocket.
    public var webSocketPath: String
    /// Messages over this close the connection with 1009, as soon as a frame header announces it.
    public var maxMessageBytes: Int
    /// Messages queued for one connection before it is closed as too slow.
    public var maxOutboundQueue: Int
    /// Payload bytes that may go to a socket in one write when a callback sends a connection
    /// several messages, the first counted (`WebSocketServer+Gather.swift`); the first goes
    /// whatever its size; 0: each message on its own.
    public var maxCoalescedWriteBytes: Int
    /// Connections closed at once (close frame sent, the peer's awaited); see `WebSocketServer+Closing.swift`.
    public var maxClosingHandshakes: Int
    /// Close code used for a slow consumer (the protocol's 4008).
    public var slowConsumerCloseCode: UInt16
    /// Close code used for a connection that stopped answering pings (the protocol's 4009).
    public var unresponsiveCloseCode: UInt16
    /// Which browser pages and `Host` names may use the server.
    public var origins: OriginConfiguration
    /// permessage-deflate. Off by default: it keeps a compressor per connection (memory at
    /// tens of thousands of scenes) and compresses every broadcast once per receiver.
    public var deflate: Bool
    /// Connections silent this long are pinged, and closed if still silent after twice it. A
    /// connection told to close that cannot be written to is dropped after this long too.
    public var idlePingMilliseconds: Int
    public var eventLoop: EventLoop
    /// Proxies (normalised addresses, `PeerAddress.normalized`) whose `X-Forwarded-For` names
    /// the client a connection counts as, for the limit on failed authentications. Members and
    /// every address looked up are written by `PeerAddress` from an address's bytes (ASCII
    /// digits, lower-case hex, `.`, `:`), never a header's text as sent, so `Set<String>`'s
    /// canonical equivalence is byte equality here.
    public var trustedProxies: Set<String>
    /// Requests under this path (`/api`: `/api`, `/api/…`) go to the delegate whole, with their
    /// body, and are answered later (`WebSocketServerDelegate.serverDidReceiveHTTPRequest`);
    /// nil serves no API.
    public var apiPath: String?
    /// An API request whose `Content-Length` is over this is refused with 413 before its body
    /// is read.
    public var maxHTTPBodyBytes: Int
    /// An API request the delegate has not answered after this long is answered with 504.
    public var httpResponseTimeoutMilliseconds: Int
    /// API requests being read or answered at once; more are refused with 503 and `Retry-After`.
    public var maxHTTPRequestsInFlight: Int
    /// Bytes of one request's request line and headers lws keeps; a request with more is
    /// dropped by lws without an answer.
    public var maxHTTPHeaderBytes: Int
    /// The time a new connection has to send its request line and headers before lws closes
    /// it without an answer, in lws's whole seconds (rounded up). The default is above
    /// `WebSocketServer.lwsTimeoutSeconds` so that each accept's first timeout goes in ahead
    /// of the others (see `makeContextInfo`).
    public var httpHeaderTimeoutMilliseconds: Int
    /// Connections that may be sending their request line and headers at once, in all and from
    /// one address (an IPv6 one by its /64; a trusted proxy's only in the total); a new one past
    /// either is closed as it is accepted, unread (`UnfinishedHeaders`).
    public var maxConnectionsInHeaders: Int
    public var maxConnectionsInHeadersPerAddress: Int
    /// Refused requests are logged here, with their reason.
    public var logger: Logger

    public init(host: String = "127.0.0.1", port: Int = 8080, webRoot: String? = nil, subprotocol: String = "panes.v1",
                webSocketPath: String = "/ws", maxMessageBytes: Int = 1 << 20, maxOutboundQueue: Int = 4096,
                maxCoalescedWriteBytes: Int = 64 << 10, maxClosingHandshakes: Int = 256,
                slowConsumerCloseCode: UInt16 = 4008, unresponsiveCloseCode: UInt16 = 4009,
                origins: OriginConfiguration = OriginConfiguration(), deflate: Bool = false,
                idlePingMilliseconds: Int = 30_000, eventLoop: EventLoop = .libev, trustedProxies: Set<String> = [],
                apiPath: String? = nil, maxHTTPBodyBytes: Int = 4 << 20, httpResponseTimeoutMilliseconds: Int = 30_000,
                maxHTTPRequestsInFlight: Int = 256, maxHTTPHeaderBytes: Int = 4_096,
                httpHeaderTimeoutMilliseconds: Int = 21_000, maxConnectionsInHeaders: Int = 4_096,
                maxConnectionsInHeadersPerAddress: Int = 1_024, logger: Logger = Logger(label: "panes.transport")) {
        self.host = host
        self.port = port
        self.webRoot = webRoot
        self.subprotocol = subprotocol
        self.webSocketPath = webSocketPath
        self.maxMessageBytes = maxMessageBytes
        self.maxOutboundQueue = maxOutboundQueue
        self.maxCoalescedWriteBytes = maxCoalescedWriteBytes
        self.maxClosingHandshakes = maxClosingHandshakes
        self.slowConsumerCloseCode = slowConsumerCloseCode
        self.unresponsiveCloseCode = unresponsiveCloseCode
        self.origins = origins
        self.deflate = deflate
        self.idlePingMilliseconds = idlePingMilliseconds
        self.eventLoop = eventLoop
        self.trustedProxies = trustedProxies
        self.apiPath = apiPath
        self.maxHTTPBodyBytes = maxHTTPBodyBytes
        self.httpResponseTimeoutMilliseconds = httpResponseTimeoutMilliseconds
        self.maxHTTPRequestsInFlight = maxHTTPRequestsInFlight
        self.maxHTTPHeaderBytes = maxHTTPHeaderBytes
        self.httpHeaderTimeoutMilliseconds = httpHeaderTimeoutMilliseconds
        self.maxConnectionsInHeaders = maxConnectionsInHeaders
        self.maxConnectionsInHeadersPerAddress = maxConnectionsInHeadersPerAddress
        self.logger = logger
    }
}

/// The event loop lws runs on.
public enum EventLoop: String, Sendable, CaseIterable {
    /// lws's own `poll()` loop: every turn scans every socket, so each event costs in
    /// proportion to the connections held. Kept for comparison in benchmarks.
    case poll
    /// libev (epoll on Linux) through lws's event-library plugin: a turn costs in proportion
    /// to the sockets that are ready, not to those held.
    case libev
}
