extension Settings {
    /// The HTTP API (requests with bodies, answered asynchronously).
    static let httpDescriptors: [Descriptor] = [
        .init(name: "maxHTTPBodyBytes", keyPath: \.maxHTTPBodyBytes,
              meaning: "Largest body of an HTTP API request, by its `Content-Length`; a bigger one is refused with 413 before it is read. A body must say its length: a chunked one is refused with 411.",
              range: 1_024...(256 << 20)),
        .init(name: "maxHTTPHeaderBytes", keyPath: \.maxHTTPHeaderBytes,
              meaning: "Bytes of one HTTP request's request line and headers, an `Authorization` token included; lws drops a request with more without an answer.",
              range: 1_024...32_768),
        .init(name: "httpHeaderTimeoutMs", keyPath: \.httpHeaderTimeoutMs,
              meaning: "Time a new connection (a WebSocket upgrade or an HTTP request) has to send its request line and headers, counted in whole seconds (rounded up); lws closes it without an answer after that. It is also how long a silent or stalled connection holds a file descriptor and a header table (about 1 KiB plus `maxHTTPHeaderBytes`): Panes does not cap connections still sending their headers, so size the open-files limit for the connects a second this allows, and lower it (or let a proxy in front time headers out) on a node exposed without one. On the libev loop (the default) lws 4.1 may close such a connection late on an otherwise quiet server, by up to its next timer. The default, past the 20 s lws gives a request body or a served file, saves lws a walk of its timeout list at each accept (bench/README.md).",
              range: 1_000...600_000),
        .init(name: "httpResponseTimeoutMs", keyPath: \.httpResponseTimeoutMs,
              meaning: "An HTTP API request not answered in this long gets 504. A write it made may still be applied: retry it with the same `Idempotency-Key`.",
              range: 100...600_000),
        .init(name: "maxHTTPRequestsInFlight", keyPath: \.maxHTTPRequestsInFlight,
              meaning: "HTTP API requests being read or answered at once; more are refused with 503 and `Retry-After: 1`.",
              range: 1...100_000),
        .init(name: "apiRateLimitPerSecond", keyPath: \.apiRateLimitPerSecond,
              meaning: "Sustained HTTP API requests per second per API key, and per subject (`sub`) for tokens, over all its connections and for a cluster as a whole: each node admits its share, this over the live nodes its heartbeat counts (requests spread over the nodes by a load balancer get all of it); more get 429 `rate_limited` with `Retry-After`.",
              range: 1...1_000_000),
        .init(name: "apiRateLimitBurst", keyPath: \.apiRateLimitBurst,
              meaning: "HTTP API requests one API key or token subject may send at once above the sustained rate, for a cluster as a whole (each node admits its share, at least 1).", range: 1...1_000_000),
    ]
}
