/// How long the PostgreSQL store keeps what only catching-up nodes read. Named settings, in
/// the README's table; set them in the store URL's query (`?panes_record_tombstone_ms=…`),
/// which the store takes out before libpq sees the URL.
public struct PostgresSettings: Sendable, Equatable {
    /// A deleted session's or document's tombstone in `record_versions` is pruned after this
    /// long. A node whose record cursor is older than that would miss the deletion: nodes
    /// follow the record sequence continuously, so a day is generous.
    public var recordTombstoneMs: Int64 = 24 * 3_600_000
    /// Preference changes older than this are pruned from `preference_changes`…
    public var preferenceLogRetentionMs: Int64 = 3_600_000
    /// …but each domain keeps at least its newest this many changes, however old. A node
    /// asking from before what is kept gets nil and reloads the domain.
    public var preferenceLogMinEntries: Int64 = 1_000
    /// Nodes whose lease ran out this long ago are forgotten (their row in `nodes` deleted).
    public var deadNodeRetentionMs: Int64 = 24 * 3_600_000
    /// A signal too large for a NOTIFY payload is kept in `node_signals` this long for the
    /// listeners to read it.
    public var signalRetentionMs: Int64 = 60_000
    /// A store transaction's commit marker (`commit_markers`, written to find out after a lost
    /// COMMIT whether it committed) is pruned after this long; the question is asked within
    /// moments of the loss, or as soon as the database is back.
    public var commitMarkerRetentionMs: Int64 = 3_600_000

    public init() {}

    /// The settings as `panes_…` query parameters name them. Key paths are immutable values,
    /// so sharing the constant across threads is safe.
    nonisolated(unsafe) static let parameters: [(name: String, keyPath: WritableKeyPath<PostgresSettings, Int64>)] = [
        ("panes_record_tombstone_ms", \.recordTombstoneMs),
        ("panes_preference_log_retention_ms", \.preferenceLogRetentionMs),
        ("panes_preference_log_min_entries", \.preferenceLogMinEntries),
        ("panes_dead_node_retention_ms", \.deadNodeRetentionMs),
        ("panes_signal_retention_ms", \.signalRetentionMs),
        ("panes_commit_marker_retention_ms", \.commitMarkerRetentionMs),
    ]

    /// Splits the settings out of a store URL: the URL libpq is given (without `panes_…`
    /// parameters, which it would refuse) and the settings.
    /// - Throws: `PostgresError` for a `panes_…` parameter that is unknown or not a number.
    public static func split(_ url: String) throws(PostgresError) -> (url: String, settings: PostgresSettings) {
        guard let query = url.firstIndex(of: "?") else { return (withConnectionDefaults(url), PostgresSettings()) }
        var settings = PostgresSettings()
        var kept: [Substring] = []
        for parameter in url[url.index(after: query)...].split(separator: "&") {
            guard parameter.hasPrefix("panes_") else {
                kept.append(parameter)
                continue
            }
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let entry = parameters.first(where: { $0.name == parts[0] }),
                  let value = Int64(parts[1]), value >= 0 else {
                throw PostgresError(.invalidRequest, "unknown or invalid store URL parameter `\(parameter)`; known: "
                                        + parameters.map(\.name).joined(separator: ", "))
            }
            settings[keyPath: entry.keyPath] = value
        }
        let base = String(url[..<query])
        return (withConnectionDefaults(kept.isEmpty ? base : base + "?" + kept.joined(separator: "&")), settings)
    }

    /// libpq's connection parameters the store sets unless the URL does: a database that
    /// stops answering (a partition rather than a refusal) must fail a call within seconds,
    /// not after the kernel's TCP timeouts, so held writes, the heartbeat and the listener
    /// notice and retry. Values in seconds, but `tcp_user_timeout` in milliseconds.
    public static let connectionDefaults: [(name: String, value: String)] = [
        ("connect_timeout", "5"),
        ("keepalives", "1"),
        ("keepalives_idle", "5"),
        ("keepalives_interval", "2"),
        ("keepalives_count", "2"),
        ("tcp_user_timeout", "5000"),
        ("application_name", "panes"),
    ]

    static func withConnectionDefaults(_ url: String) -> String {
        let query = url.firstIndex(of: "?").map { String(url[url.index(after: $0)...]) } ?? ""
        let present = Set(query.split(separator: "&").map { String($0.split(separator: "=", maxSplits: 1).first ?? "") })
        let missing = connectionDefaults.filter { !present.contains($0.name) }.map { "\($0.name)=\($0.value)" }
        guard !missing.isEmpty else { return url }
        return url + (url.contains("?") ? "&" : "?") + missing.joined(separator: "&")
    }
}
