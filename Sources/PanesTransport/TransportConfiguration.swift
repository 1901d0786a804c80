/// How the WebSocket server listens and what it accepts. Plain values: built by the runtime
/// from the server's settings.
public struct TransportConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; read the real one from `WebSocketServer.port`.
    public var port: Int
    /// Served at `/`; nil serves no files.
    public var webRoot: String?
    public var subprotocol: String
    /// The only path that upgrades to a WebSocket.
    public var webSocketPath: String
    /// Messages over this close the connection with 1009.
    public var maxMessageBytes: Int
    /// Messages queued for one connection before it is closed as too slow.
    public var maxOutboundQueue: Int
    /// Close code used for a slow consumer (the protocol's 4008).
    public var slowConsumerCloseCode: UInt16
    /// Close code used for a connection that stopped answering pings (the protocol's 4009).
    public var unresponsiveCloseCode: UInt16
    public var origins: OriginPolicy
    /// permessage-deflate. Off by default: it keeps a compressor per connection (memory at
    /// tens of thousands of scenes) and compresses every broadcast once per receiver.
    public var deflate: Bool
    /// Connections silent this long are pinged, and closed if still silent after twice it.
    public var idlePingMilliseconds: Int
    /// How often `WebSocketServerDelegate.serverTick()` runs.
    public var tickMilliseconds: Int

    public init(host: String = "127.0.0.1", port: Int = 8080, webRoot: String? = nil, subprotocol: String = "panes.v1",
                webSocketPath: String = "/ws", maxMessageBytes: Int = 1 << 20, maxOutboundQueue: Int = 4096,
                slowConsumerCloseCode: UInt16 = 4008, unresponsiveCloseCode: UInt16 = 4009, origins: OriginPolicy = .sameOrigin, deflate: Bool = false,
                idlePingMilliseconds: Int = 30_000, tickMilliseconds: Int = 100) {
        self.host = host
        self.port = port
        self.webRoot = webRoot
        self.subprotocol = subprotocol
        self.webSocketPath = webSocketPath
        self.maxMessageBytes = maxMessageBytes
        self.maxOutboundQueue = maxOutboundQueue
        self.slowConsumerCloseCode = slowConsumerCloseCode
        self.unresponsiveCloseCode = unresponsiveCloseCode
        self.origins = origins
        self.deflate = deflate
        self.idlePingMilliseconds = idlePingMilliseconds
        self.tickMilliseconds = tickMilliseconds
    }
}

/// Which browser origins may open a WebSocket. Requests without an `Origin` header come from
/// non-browser clients (scripts, tests, `panes` itself) and are always allowed: the check
/// exists to stop other web pages from riding a user's browser into the server.
public enum OriginPolicy: Sendable, Equatable {
    /// The page must come from this server (`Origin`'s host:port equals the `Host` header).
    case sameOrigin
    /// Same origin, or one of these exact origins (`http://localhost:3000`).
    case allowList([String])
    /// Any origin: for development only.
    case any

    public func allows(origin: String?, host: String?) -> Bool {
        guard let origin, !origin.isEmpty else { return true }
        if case .any = self { return true }
        if case .allowList(let list) = self, list.contains(origin) { return true }
        guard let host else { return false }
        let withoutScheme = origin.split(separator: "://", maxSplits: 1).last.map(String.init) ?? origin
        return withoutScheme == host
    }
}
