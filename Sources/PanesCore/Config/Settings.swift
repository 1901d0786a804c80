/// Every limit and timing of the server, each a named setting with a default.
///
/// Names here are the names in the configuration file (`"settings": {...}`), in the table of
/// docs/operating.md and in error messages, so a client that hits a limit can find the knob.
public struct Settings: Sendable, Equatable {
    // Transport
    public var maxMessageBytes = 1 << 20
    public var maxJSONDepth = 64
    public var maxOutboundQueue = 4096
    public var maxCoalescedWriteBytes = 64 << 10
    public var maxClosingHandshakes = 256
    public var maxHeldPerConnection = 1024
    public var connectTimeoutMs = 10_000
    public var maxRequestsBehindConnect = 64
    public var rateLimitPerSecond = 200
    public var rateLimitBurst = 400
    public var drainReconnectAfterMs = 1_000
    public var drainTimeoutMs = 5_000
    public var idlePingMs = 30_000

    // Sessions
    public var maxSessionsPerUser = 1_000
    public var maxUserInfoBytes = 64 << 10
    public var maxActivityBytes = 64 << 10
    public var maxSnapshotBytes = 16 << 10
    public var livenessProbeTimeoutMs = 2_000
    // Cluster (several nodes on one shared store)
    public var nodeLeaseMs = 5_000
    public var nodeHeartbeatMs = 1_000
    public var nodeCheckIntervalMs = 200
    public var conflictRetryWaitMs = 1_000
    public var commitOutcomeTimeoutMs = 3_000
    public var restorationMaxAgeMs = 30 * 24 * 3_600_000
    public var cleanStartThreshold = 3
    public var cleanStartWindowMs = 10_000
    public var sessionMaxIdleMs = 30 * 24 * 3_600_000
    public var ticketLifetimeMs = 60_000
    public var dragLifetimeMs = 60_000
    public var maxDragItems = 32

    // Preferences
    public var maxObservationsPerScene = 256
    public var maxPreferenceValueBytes = 16 << 10
    public var maxPreferenceKeys = 20_000
    public var maxPreferenceBytes = 8 << 20
    public var workspacePreferenceWriters = Role.editor

    // Documents
    public var maxDocumentScalars = 1 << 20
    public var maxOperationBytes = 256 << 10
    public var maxDocumentsPerWorkspace = 10_000
    public var operationLogRetention = 1_000
    public var operationLogRetentionMs = 24 * 3_600_000
    public var operationLogRetentionBytes = 2 << 20
    public var maxCatchUpOperations = 2_000
    public var operationIdRetentionMs = 30 * 24 * 3_600_000
    public var operationIdRetentionStreams = 10_000
    public var snapshotEvery = 1_000
    public var snapshotEveryBytes = 1 << 20
    public var documentListIntervalMs = 250
    public var sceneShareIntervalMs = 100
    public var maxListedParticipants = 32
    public var maxPresenceBytes = 2_048
    public var presenceIntervalMs = 50
    public var maxSharesPerDocument = 1_000
    public var defaultLinkLifetimeMs = 7 * 24 * 3_600_000
    public var maxLinkLifetimeMs = 365 * 24 * 3_600_000

    // Versions
    public var maxVersionNameBytes = 256
    public var maxNamedVersionsPerDocument = 1_000
    public var maxCheckpointsPerDocument = 100
    public var versionCheckpointPauseMs = 30_000
    public var versionCheckpointOperations = 1_000

    // Security
    public var maxTokenBytes = 8 << 10
    public var jwtClockSkewMs = 30_000
    public var jwtCacheEntries = 10_000
    public var authFailureBurst = 20
    public var authFailuresPerMinute = 60
    public var maxAuthFailureAddresses = 10_000
    public var walCheckpointIntervalMs = 60_000
    public var sqliteCacheKiB = 512
    public var quietWriteDelayMs = 20

    // Request keys (`idempotencyKey`)
    public var idempotencyRetentionMs = 600_000
    public var maxIdempotencyKeysPerUser = 1_000

    // HTTP API (requests with bodies, answered asynchronously)
    public var maxHTTPBodyBytes = 4 << 20
    public var maxHTTPHeaderBytes = 4_096
    public var httpResponseTimeoutMs = 30_000
    public var maxHTTPRequestsInFlight = 256
    public var apiRateLimitPerSecond = 100
    public var apiRateLimitBurst = 200

    // Webhooks (delivery from the outbox)
    public var webhookCoalesceMs = 1_000
    public var webhookConnectTimeoutMs = 5_000
    public var webhookTimeoutMs = 15_000
    public var webhookMaxResponseBytes = 64 << 10
    public var webhookRetryFirstMs = 5_000
    public var webhookRetryMaxMs = 24 * 3_600_000
    public var webhookGiveUpMs = 3 * 24 * 3_600_000
    public var webhookEndpointConcurrency = 4
    public var webhookLeaseMs = 60_000
    public var webhookPollMs = 1_000

    public init() {}

    /// One entry per integer setting: its name, where it lives, what it means and its range.
    public struct Descriptor: Sendable {
        public let name: String
        public let keyPath: any WritableKeyPath<Settings, Int> & Sendable
        public let meaning: String
        public let range: ClosedRange<Int>
    }

    public static let descriptors: [Descriptor] = [
        .init(name: "maxMessageBytes", keyPath: \.maxMessageBytes,
              meaning: "Largest WebSocket message accepted; a bigger one closes the connection with 1009.",
              range: 1_024...(64 << 20)),
        .init(name: "maxJSONDepth", keyPath: \.maxJSONDepth,
              meaning: "Deepest nesting of arrays and objects in one message; deeper gets `nesting_too_deep`.",
              range: 4...512),
        .init(name: "maxOutboundQueue", keyPath: \.maxOutboundQueue,
              meaning: "Messages queued for one slow client before it is closed with 4008.", range: 16...1_000_000),
        .init(name: "maxCoalescedWriteBytes", keyPath: \.maxCoalescedWriteBytes,
              meaning: "Bytes of messages written to a client in one system call when the server sends it several in the same turn (a batch's fan-out); one that would pass it waits in the client's queue. The first always goes, whatever its size; 0 writes each message on its own.",
              range: 0...(16 << 20)),
        .init(name: "maxClosingHandshakes", keyPath: \.maxClosingHandshakes,
              meaning: "Connections the server closes at once (its close frame sent, the client's awaited); others wait their turn. lws keeps every closing connection's timer in one sorted list, so closing ten thousand at once (a drain) cost time in their square: 4.5 s at 10,000.",
              range: 1...1_000_000),
        .init(name: "maxHeldPerConnection", keyPath: \.maxHeldPerConnection,
              meaning: "Messages held for one connection while its writes become durable; at this many the server stops reading it until half have gone.",
              range: 2...1_000_000),
        .init(name: "connectTimeoutMs", keyPath: \.connectTimeoutMs,
              meaning: "Time a new connection has to send `connect` before it is closed with 4000. A `connect` still being answered then (it waits for a liveness probe, a lease, another node or a request key) gets as long again, counted from then, as often as it needs: if it fails, the connection must send another `connect` before that runs out.",
              range: 100...600_000),
        .init(name: "maxRequestsBehindConnect", keyPath: \.maxRequestsBehindConnect,
              meaning: "Requests a connection may send behind a `connect` that is still being answered; they are handled after it, more get `too_many`.",
              range: 0...100_000),
        .init(name: "rateLimitPerSecond", keyPath: \.rateLimitPerSecond,
              meaning: "Sustained requests per second per connection; more get `rate_limited`.", range: 1...1_000_000),
        .init(name: "rateLimitBurst", keyPath: \.rateLimitBurst,
              meaning: "Requests a connection may send at once above the sustained rate.", range: 1...1_000_000),
        .init(name: "drainReconnectAfterMs", keyPath: \.drainReconnectAfterMs,
              meaning: "On SIGTERM, how long scenes are told to wait before reconnecting.", range: 0...600_000),
        .init(name: "drainTimeoutMs", keyPath: \.drainTimeoutMs,
              meaning: "On SIGTERM, the longest the server waits for queues and the store to flush.",
              range: 0...600_000),
        .init(name: "idlePingMs", keyPath: \.idlePingMs,
              meaning: "A connection silent this long is pinged; still silent after twice it, it is closed with 4009.",
              range: 1_000...3_600_000),
        .init(name: "maxSessionsPerUser", keyPath: \.maxSessionsPerUser,
              meaning: "Sessions one user may keep in one workspace; more gets `too_many`.", range: 1...1_000_000),
        .init(name: "maxUserInfoBytes", keyPath: \.maxUserInfoBytes,
              meaning: "Encoded size of a session's `userInfo`.", range: 64...(16 << 20)),
        .init(name: "maxActivityBytes", keyPath: \.maxActivityBytes,
              meaning: "Encoded size of one activity (restoration, activation or drag item).",
              range: 64...(16 << 20)),
        .init(name: "maxSnapshotBytes", keyPath: \.maxSnapshotBytes,
              meaning: "Encoded size of a session's switcher snapshot.", range: 64...(16 << 20)),
        .init(name: "livenessProbeTimeoutMs", keyPath: \.livenessProbeTimeoutMs,
              meaning: "When a connect names a session with a live scene, how long that scene has to answer a ping before its session is resumed instead of forked.",
              range: 10...60_000),
        .init(name: "nodeLeaseMs", keyPath: \.nodeLeaseMs,
              meaning: "Cluster: how long a node counts as alive after its last heartbeat; its sessions are taken over after that, and a node that could not renew for this long closes its scenes (4011).",
              range: 500...600_000),
        .init(name: "nodeHeartbeatMs", keyPath: \.nodeHeartbeatMs,
              meaning: "Cluster: how often a node renews its lease; keep it well under `nodeLeaseMs`.",
              range: 100...60_000),
        .init(name: "nodeCheckIntervalMs", keyPath: \.nodeCheckIntervalMs,
              meaning: "Cluster: while a connect waits for a session held on another node, how often this node asks the database whether that node is gone (its lease run out, or its lock released because its connection dropped: killed), so a dead node's windows resume without waiting out its lease.",
              range: 20...60_000),
        .init(name: "conflictRetryWaitMs", keyPath: \.conflictRetryWaitMs,
              meaning: "Cluster: when a node's document commit conflicts, the longest its store thread keeps the document locked waiting for the retry (normally well under a millisecond; this bounds a stalled service thread).",
              range: 1...60_000),
        .init(name: "commitOutcomeTimeoutMs", keyPath: \.commitOutcomeTimeoutMs,
              meaning: "When the connection to a shared store is lost around a COMMIT, how long the node keeps asking whether it committed before the writes waiting on it are answered `outcome_unknown` (it keeps asking after that, and answers a retry with the same `idempotencyKey` with what happened).",
              range: 100...600_000),
        .init(name: "restorationMaxAgeMs", keyPath: \.restorationMaxAgeMs,
              meaning: "Restoration activities saved longer ago than this are not handed back (status `stale`).",
              range: 1_000...Int(Int32.max) * 1_000),
        .init(name: "cleanStartThreshold", keyPath: \.cleanStartThreshold,
              meaning: "Abnormal disconnects soon after a restore, in a row, before the restoration activity is dropped.",
              range: 1...1_000),
        .init(name: "cleanStartWindowMs", keyPath: \.cleanStartWindowMs,
              meaning: "An abnormal disconnect this soon after a restore counts towards `cleanStartThreshold`.",
              range: 100...3_600_000),
        .init(name: "sessionMaxIdleMs", keyPath: \.sessionMaxIdleMs,
              meaning: "Sessions with no live scene for this long are discarded automatically.",
              range: 1_000...Int(Int32.max) * 1_000),
        .init(name: "ticketLifetimeMs", keyPath: \.ticketLifetimeMs,
              meaning: "How long a new-window ticket can be redeemed.", range: 100...3_600_000),
        .init(name: "dragLifetimeMs", keyPath: \.dragLifetimeMs,
              meaning: "How long a drag can be dropped before it is cancelled.", range: 100...3_600_000),
        .init(name: "maxDragItems", keyPath: \.maxDragItems, meaning: "Items in one drag.", range: 1...10_000),
        .init(name: "maxObservationsPerScene", keyPath: \.maxObservationsPerScene,
              meaning: "Preference observations one scene may hold.", range: 1...100_000),
        .init(name: "maxPreferenceValueBytes", keyPath: \.maxPreferenceValueBytes,
              meaning: "Encoded size of one preference value.", range: 16...(16 << 20)),
        .init(name: "maxPreferenceKeys", keyPath: \.maxPreferenceKeys,
              meaning: "Keys one preference domain (a user's, or a workspace's) may hold; more gets `too_many`.",
              range: 1...10_000_000),
        .init(name: "maxPreferenceBytes", keyPath: \.maxPreferenceBytes,
              meaning: "Encoded bytes of every key and value in one preference domain; more gets `too_large`.",
              range: 1_024...(1 << 30)),
        .init(name: "maxDocumentScalars", keyPath: \.maxDocumentScalars,
              meaning: "Length of one document in Unicode scalar values.", range: 1_024...(256 << 20)),
        .init(name: "maxOperationBytes", keyPath: \.maxOperationBytes,
              meaning: "Encoded size of one document operation.", range: 64...(64 << 20)),
        .init(name: "maxDocumentsPerWorkspace", keyPath: \.maxDocumentsPerWorkspace,
              meaning: "Documents in one workspace.", range: 1...10_000_000),
        .init(name: "operationLogRetention", keyPath: \.operationLogRetention,
              meaning: "Operations always kept per document behind its latest snapshot, for catching up reconnecting clients exactly.",
              range: 0...10_000_000),
        .init(name: "operationLogRetentionMs", keyPath: \.operationLogRetentionMs,
              meaning: "Older operations are kept too while younger than this, so a window back from an ordinary outage catches up "
                  + "exactly (past the kept log, its unsent edits are rebased over the difference instead); 0 keeps by count only.",
              range: 0...(365 * 24 * 3_600_000)),
        .init(name: "operationLogRetentionBytes", keyPath: \.operationLogRetentionBytes,
              meaning: "…but only while the kept operations of a document add up to at most this many bytes (encoded, with their op "
                  + "ids and authors): a busy document keeps less time. Held in memory while the document is open.",
              range: 0...(1 << 30)),
        .init(name: "maxCatchUpOperations", keyPath: \.maxCatchUpOperations,
              meaning: "A re-opening window more operations behind than this gets the whole text instead (and rebases its unsent "
                  + "edits over the difference): encoding thousands of operations holds up the server's thread longer than the text.",
              range: 0...10_000_000),
        .init(name: "operationIdRetentionMs", keyPath: \.operationIdRetentionMs,
              meaning: "Past the kept log, a document still remembers which client operations it applied (the last op id of each "
                  + "op-id stream) for this long, so a window back from a longer outage does not send one twice.",
              range: 0...(3_650 * 24 * 3_600_000)),
        .init(name: "operationIdRetentionStreams", keyPath: \.operationIdRetentionStreams,
              meaning: "…for at most this many op-id streams per document (the oldest are forgotten first).",
              range: 0...10_000_000),
        .init(name: "snapshotEvery", keyPath: \.snapshotEvery,
              meaning: "A document's text is snapshotted to the store every this many operations (by the commit that takes its revision past a multiple of it: on a cluster, one node). A snapshot rewrites the whole text; opening a document replays at most this many operations onto it.",
              range: 1...1_000_000),
        .init(name: "snapshotEveryBytes", keyPath: \.snapshotEveryBytes,
              meaning: "A document's text is also snapshotted once the operations since the last snapshot add up to this "
                  + "many bytes (encoded), so a few large operations do not wait for `snapshotEvery`.",
              range: 1_024...(1 << 30)),
        .init(name: "maxVersionNameBytes", keyPath: \.maxVersionNameBytes,
              meaning: "Length of a named version's name, in UTF-8 bytes; longer gets `too_large` naming `name`.",
              range: 1...65_536),
        .init(name: "maxNamedVersionsPerDocument", keyPath: \.maxNamedVersionsPerDocument,
              meaning: "Named versions one document may keep (each holds its whole text); more gets `too_many`. "
                  + "They go only with their document.",
              range: 0...1_000_000),
        .init(name: "maxCheckpointsPerDocument", keyPath: \.maxCheckpointsPerDocument,
              meaning: "Automatic checkpoints kept per document (each holds its whole text); the oldest go first.",
              range: 0...1_000_000),
        .init(name: "versionCheckpointPauseMs", keyPath: \.versionCheckpointPauseMs,
              meaning: "A document edited on a node is checkpointed once nobody has edited it there for this long (and when it "
                  + "leaves memory); 0 turns pause checkpoints off.",
              range: 0...(7 * 24 * 3_600_000)),
        .init(name: "versionCheckpointOperations", keyPath: \.versionCheckpointOperations,
              meaning: "…and after this many operations committed on that node since its last checkpoint; 0 turns this off.",
              range: 0...10_000_000),
        .init(name: "documentListIntervalMs", keyPath: \.documentListIntervalMs,
              meaning: "Modifications to a document are announced to document-list observers at most this often.",
              range: 0...60_000),
        .init(name: "sceneShareIntervalMs", keyPath: \.sceneShareIntervalMs,
              meaning: "On a cluster, a node tells the others of a user's live windows (for their switchers) at most this often per user: "
                  + "each message lists all of that user's windows on the node, so a burst of connects costs one list per interval, not one per connect.",
              range: 0...10_000),
        .init(name: "maxListedParticipants", keyPath: \.maxListedParticipants,
              meaning: "Participants listed in a document summary (`participantCount` has them all), so each opening costs list observers the same.",
              range: 1...10_000),
        .init(name: "maxPresenceBytes", keyPath: \.maxPresenceBytes,
              meaning: "Encoded size of a scene's presence payload (`setPresence`'s `data`); larger gets `too_large`.",
              range: 0...(64 << 10)),
        .init(name: "presenceIntervalMs", keyPath: \.presenceIntervalMs,
              meaning: "Others hear of one scene's presence in a document at most this often: a change inside the interval is "
                  + "held and the latest sent when it ends (a departure is never held); 0 sends every change at once.",
              range: 0...10_000),
        .init(name: "maxSharesPerDocument", keyPath: \.maxSharesPerDocument,
              meaning: "Grants to users and links (revoked and expired ones included, until room is needed) one document may have; "
                  + "more gets `too_many`.",
              range: 1...100_000),
        .init(name: "defaultLinkLifetimeMs", keyPath: \.defaultLinkLifetimeMs,
              meaning: "How long a document link lasts when `createDocumentLink` names no `expiresInMs`.",
              range: 1_000...(3_650 * 24 * 3_600_000)),
        .init(name: "maxLinkLifetimeMs", keyPath: \.maxLinkLifetimeMs,
              meaning: "Longest `expiresInMs` a document link may be given (at least 1,000).",
              range: 1_000...(3_650 * 24 * 3_600_000)),
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
        .init(name: "idempotencyRetentionMs", keyPath: \.idempotencyRetentionMs,
              meaning: "How long the outcome of a request sent with an `idempotencyKey` is kept, so that a retry with the same key is answered with it instead of applied again; a retry later than this is a new request.",
              range: 1_000...(7 * 86_400_000)),
        .init(name: "maxIdempotencyKeysPerUser", keyPath: \.maxIdempotencyKeysPerUser,
              meaning: "Outcomes of keyed requests kept per user and workspace; beyond it the oldest are forgotten first, and a retry with a forgotten key is a new request.",
              range: 1...1_000_000),
        .init(name: "maxHTTPBodyBytes", keyPath: \.maxHTTPBodyBytes,
              meaning: "Largest body of an HTTP API request, by its `Content-Length`; a bigger one is refused with 413 before it is read. A body must say its length: a chunked one is refused with 411.",
              range: 1_024...(256 << 20)),
        .init(name: "maxHTTPHeaderBytes", keyPath: \.maxHTTPHeaderBytes,
              meaning: "Bytes of one HTTP request's request line and headers, an `Authorization` token included; lws drops a request with more without an answer.",
              range: 1_024...32_768),
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
        .init(name: "webhookCoalesceMs", keyPath: \.webhookCoalesceMs,
              meaning: "Changes of one document within this long of its first undelivered change go to an endpoint as one `document.changed` event carrying the revision range; 0 sends each change.",
              range: 0...3_600_000),
        .init(name: "webhookConnectTimeoutMs", keyPath: \.webhookConnectTimeoutMs,
              meaning: "How long a webhook delivery may take to connect (TLS included) before the attempt counts as failed.",
              range: 100...120_000),
        .init(name: "webhookTimeoutMs", keyPath: \.webhookTimeoutMs,
              meaning: "How long one webhook delivery attempt may take in all before it counts as failed; keep it well under `webhookLeaseMs`.",
              range: 100...600_000),
        .init(name: "webhookMaxResponseBytes", keyPath: \.webhookMaxResponseBytes,
              meaning: "Bytes of a receiver's answer read (kept for inspection); the rest is not read, and a 2xx status still counts as delivered.",
              range: 0...(16 << 20)),
        .init(name: "webhookRetryFirstMs", keyPath: \.webhookRetryFirstMs,
              meaning: "Wait before a failed webhook delivery's first retry; each retry waits four times the one before (up to `webhookRetryMaxMs`), with a random half of it as jitter.",
              range: 10...86_400_000),
        .init(name: "webhookRetryMaxMs", keyPath: \.webhookRetryMaxMs,
              meaning: "Longest wait between two attempts of one webhook delivery (a receiver's `Retry-After` is kept to it too).",
              range: 10...(7 * 86_400_000)),
        .init(name: "webhookGiveUpMs", keyPath: \.webhookGiveUpMs,
              meaning: "A webhook delivery still failing this long after its first attempt is given up: kept, dead-lettered, for inspection, and the document's next events go on.",
              range: 100...(30 * 86_400_000)),
        .init(name: "webhookEndpointConcurrency", keyPath: \.webhookEndpointConcurrency,
              meaning: "Deliveries in flight to one webhook endpoint at once (per node), so a slow receiver holds only its own share.",
              range: 1...1_000),
        .init(name: "webhookLeaseMs", keyPath: \.webhookLeaseMs,
              meaning: "How long a node's claim on a webhook delivery lasts; a node that dies mid-delivery delays it by at most this, then another node delivers it (with the same id).",
              range: 500...3_600_000),
        .init(name: "webhookPollMs", keyPath: \.webhookPollMs,
              meaning: "How often a node looks in the outbox for deliveries that came due without it being told (retries, other nodes' events).",
              range: 10...60_000),
    ]

    /// Applies the `settings` object of a configuration file; unknown names and out-of-range
    /// values are refused so a typo never silently keeps a default.
    public mutating func apply(_ json: JSONObject) throws(PanesError) {
        for (name, value) in json {
            // Names compare by their bytes (CONCEPTS.md, invariant 10): `maxPreferenceKeys`
            // spelled with KELVIN SIGN is not a setting, whatever `==` on `String` says.
            if Identifier.equal(name, "workspacePreferenceWriters") {
                guard let string = value.stringValue, let role = Role(rawValue: string) else {
                    throw .invalid("settings.\(name)", "must be one of `owner`, `editor`, `viewer`")
                }
                workspacePreferenceWriters = role
                continue
            }
            guard let descriptor = Self.descriptors.first(where: { Identifier.equal($0.name, name) }) else {
                throw .invalid("settings.\(name)", "is not a known setting\(FieldReader.nonASCII(name))")
            }
            guard let int = value.intValue, let number = Int(exactly: int), descriptor.range.contains(number) else {
                throw .invalid("settings.\(name)",
                               "must be an integer from \(descriptor.range.lowerBound) to \(descriptor.range.upperBound)")
            }
            self[keyPath: descriptor.keyPath] = number
        }
    }
}
