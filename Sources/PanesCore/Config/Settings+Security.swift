extension Settings {
    /// Tokens, failed authentications, and the SQLite store's upkeep.
    static let securityDescriptors: [Descriptor] = [
        .init(name: "maxTokenBytes", keyPath: \.maxTokenBytes,
              meaning: "Length of a token in `connect` (`auth.token`) or `refreshToken`.", range: 256...(64 << 10)),
        .init(name: "jwtClockSkewMs", keyPath: \.jwtClockSkewMs,
              meaning: "With `--auth jwt`, how far a token's `exp` and `nbf` may be off the server's clock and still be accepted.",
              range: 0...300_000),
        .init(name: "jwtCacheEntries", keyPath: \.jwtCacheEntries,
              meaning: "With `--auth jwt`, tokens whose signature was checked are remembered (by SHA-256) up to this many, so a user's other tabs and reconnects skip the check; 0 turns it off.",
              range: 0...1_000_000),
        .init(name: "authFailureBurst", keyPath: \.authFailureBurst,
              meaning: "Failed authentications (a `connect` or `refreshToken` whose token is refused) one peer address may make in a row; after them its tokens are refused unchecked, with `rate_limited`, and a `connect` is closed with 4012, until `authFailuresPerMinute` gives it another. Not used by `--auth open`.",
              range: 1...1_000_000),
        .init(name: "authFailuresPerMinute", keyPath: \.authFailuresPerMinute,
              meaning: "Failed authentications per minute one peer address may make after `authFailureBurst`. Behind a proxy every client is the proxy's address unless it is a `--trusted-proxy`.",
              range: 1...60_000_000),
        .init(name: "maxAuthFailureAddresses", keyPath: \.maxAuthFailureAddresses,
              meaning: "Peer addresses whose failed authentications are remembered; past it the one nearest to being allowed again is forgotten, so many addresses cost no more memory than this.",
              range: 1...10_000_000),
        .init(name: "walCheckpointIntervalMs", keyPath: \.walCheckpointIntervalMs,
              meaning: "How often the store folds its write-ahead log into the database and truncates it, so deleted data leaves the log.",
              range: 1_000...86_400_000),
        .init(name: "sqliteCacheKiB", keyPath: \.sqliteCacheKiB,
              meaning: "Memory, in KiB, the SQLite store keeps pages of its database file in (`PRAGMA cache_size`), for each connection "
                  + "the server opens to the file (the store's, and the webhook outbox's when webhooks are configured); a page beyond it "
                  + "is read again from the operating system's file cache (one `pread`) when a commit needs it. The cache fills to this "
                  + "size as sessions are written and stays full; the start-up log's `SQLite store opened` and `webhook outbox opened` "
                  + "lines (level info) give the size SQLite holds (`sqliteCacheKiB=…`). Not used by other stores.",
              range: 16...4_194_304),
        .init(name: "quietWriteDelayMs", keyPath: \.quietWriteDelayMs,
              meaning: "Store writes that no answer waits for (a resumed window's `liveSince`) wait up to this long to share a commit "
                  + "with others, so a reconnect storm's bookkeeping takes a few commits and fsyncs, not one per window or two; "
                  + "any write something waits for ends the wait at once. 0 commits each at once.",
              range: 0...1_000),
    ]
}
