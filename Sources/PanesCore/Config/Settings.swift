/// Every limit and timing of the server, each a named setting with a default.
///
/// Names here are the names in the configuration file (`"settings": {...}`), in the table of
/// docs/operating.md and in error messages, so a client that hits a limit can find the knob.
/// Each group's names, meanings and ranges are in its own file (`Settings+Transport.swift`, …),
/// gathered in `descriptors` (Settings+Descriptors.swift).
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
    public var dropConfirmTimeoutMs = 2_000
    public var dropRecoveryMs = 5_000
    public var heldDropKeptMs = 3_600_000
    public var heldDropPruneIntervalMs = 60_000
    public var maxHeldDropMarks = 10_000
    public var heldDropReadRetries = 30
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
    public var httpHeaderTimeoutMs = 21_000
    public var maxConnectionsInHeaders = 0  // the open-files limit (`Serve+Transport`)
    public var maxConnectionsInHeadersPerAddress = 1_024
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
        try checkTogether()
    }

    /// Limits between settings, checked once all are set (whichever the file names).
    func checkTogether() throws(PanesError) {
        // A node stops serving `nodeLeaseMs − nodeHeartbeatMs` after it sent its last renewal
        // (ClusterNode), and sends the next one a heartbeat after that one: with a lease under
        // three heartbeats, a renewal that takes longer than a heartbeat to come back (a slow
        // fsync) would come back after the node stopped, and under two every node would close
        // its scenes between any two renewals. A lease not held is held again only by a
        // renewal that came back at least a heartbeat before its deadline (`ClusterNode`): the
        // lease watch, not woken on the regain, looks again within a heartbeat, so before that
        // deadline, the next loss.
        guard nodeLeaseMs >= 3 * nodeHeartbeatMs else {
            throw .invalid("settings.nodeHeartbeatMs",
                           "must be at most a third of nodeLeaseMs (\(nodeLeaseMs) ms): a node stops serving "
                               + "nodeLeaseMs − nodeHeartbeatMs after its last renewal was sent, and each renewal "
                               + "must come back before then; it is \(nodeHeartbeatMs)")
        }
        // A node's reservation of a request key is taken over once older than `nodeLeaseMs`
        // even while the node lives; a drop waiting for another node's answer holds one, and
        // must be settled (its answer known) before then, with a heartbeat to spare.
        guard dropConfirmTimeoutMs < nodeLeaseMs - nodeHeartbeatMs else {
            throw .invalid("settings.dropConfirmTimeoutMs",
                           "must be under nodeLeaseMs − nodeHeartbeatMs (\(nodeLeaseMs) − \(nodeHeartbeatMs) ms); "
                               + "it is \(dropConfirmTimeoutMs)")
        }
    }
}
