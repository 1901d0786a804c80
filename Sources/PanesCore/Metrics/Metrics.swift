/// Counters the hub keeps; the runtime renders them with the transport's own as Prometheus text.
public struct Metrics: Sendable {
    public var connectionsOpened = 0
    public var connectionsClosed = 0
    public var messagesOut = 0
    /// Requests received, by type: the protocol's requests by `ClientRequest.typeIndex`
    /// (counted in an array, with no name hashed, issue 27), anything else (an API read,
    /// "(invalid)", "(unreadable)") by name.
    var requestsByType = [Int](repeating: 0, count: Hub.requestTypes.count)
    var otherRequests: [String: Int] = [:]
    /// Requests received, by name, those never received left out.
    public var requests: [String: Int] {
        var requests = otherRequests
        for (index, count) in requestsByType.enumerated() where count > 0 {
            requests[Hub.requestTypes[index], default: 0] += count
        }
        return requests
    }
    public var errors: [String: Int] = [:]
    public var lifecycle = LifecycleCounts()
    /// Document commits by outcome, and the edits the committed ones carried: their ratio is
    /// the batch size, and conflicts say how often nodes raced on one document.
    public var documentCommits: [String: Int] = [:]
    public var documentOperationsCommitted = 0
    /// Reads of a document's operations that other nodes committed, by what asked for them:
    /// a notice (the node was idle) or a conflict the store did not answer with them.
    public var documentCatchUps: [String: Int] = [:]
    /// Operations other nodes committed, applied here.
    public var documentOperationsFollowed = 0
    /// Keyed requests answered from their key's record instead of applied again.
    public var requestsReplayed = 0
    /// Commits whose outcome was not known in time (`outcome_unknown`), and of those, how the
    /// store found out later.
    public var commitsUnknown: [String: Int] = [:]
    /// Sessions marked to have their held drops read at their next attach, forgotten past
    /// `maxHeldDropMarks` (`HeldDropMarks`).
    public var heldDropMarksForgotten = 0
    /// Credentials refused, and those refused unchecked because their address failed too often.
    public var authenticationsFailed = 0
    public var authenticationsLimited = 0

    mutating func countRequest(_ request: ClientRequest) {
        requestsByType[request.typeIndex] += 1
    }

    /// A request that is not the protocol's (an API read), or that did not decode.
    mutating func countRequest(named name: String) {
        otherRequests[name, default: 0] += 1
    }

    mutating func countDocumentCommit(_ outcome: CommitOutcome, operations: Int) {
        let name = switch outcome {
        case .committed: "committed"
        case .conflict: "conflict"
        case .behind: "behind"
        case .failed: "failed"
        case .recorded: "recorded"
        case .unknown: "unknown"
        }
        documentCommits[name, default: 0] += 1
        if outcome == .committed { documentOperationsCommitted += operations }
    }
}

extension Hub {
    /// The hub's part of `/metrics`, in Prometheus text exposition format.
    public func metricsText() -> String {
        var out = PrometheusText()
        out.gauge("panes_scenes", "Connected scenes by activation state.",
                  ActivationState.allCases.map { state in
                      (["state": state.rawValue], scenes.all.count(where: { $0.state == state }))
                  })
        out.gauge("panes_sessions", "Stored scene sessions.", [([:], sessions.count)])
        out.counter("panes_connections_opened_total", "Connections opened.", [([:], metrics.connectionsOpened)])
        out.counter("panes_connections_closed_total", "Connections closed.", [([:], metrics.connectionsClosed)])
        out.counter("panes_messages_in_total", "Requests received, by type.",
                    metrics.requests.sorted { $0.key < $1.key }.map { (["type": $0.key], $0.value) })
        out.counter("panes_messages_out_total", "Messages queued to clients.", [([:], metrics.messagesOut)])
        out.counter("panes_errors_total", "Error replies, by code.",
                    ErrorCode.allCases.map { (["code": $0.rawValue], metrics.errors[$0.rawValue] ?? 0) })
        out.counter("panes_scene_events_total", "Scene lifecycle callbacks.",
                    LifecycleEvent.allCases.map { (["event": $0.rawValue], metrics.lifecycle[$0]) })
        out.counter("panes_document_commits_total",
                    "Document commits by outcome (behind: a conflict answered with the other nodes' operations).",
                    ["committed", "conflict", "behind", "failed"].map { (["outcome": $0], metrics.documentCommits[$0] ?? 0) })
        out.counter("panes_document_operations_committed_total", "Edits carried by the document commits that committed.",
                    [([:], metrics.documentOperationsCommitted)])
        out.counter("panes_document_catch_up_reads_total",
                    "Reads of operations other nodes committed, by cause (a notice, or a conflict).",
                    ["notice", "conflict"].map { (["cause": $0], metrics.documentCatchUps[$0] ?? 0) })
        out.counter("panes_document_operations_followed_total", "Operations other nodes committed, applied here.",
                    [([:], metrics.documentOperationsFollowed)])
        out.counter("panes_requests_replayed_total",
                    "Requests sent again with an idempotencyKey, answered with the first attempt's outcome.",
                    [([:], metrics.requestsReplayed)])
        out.counter("panes_commits_unknown_total",
                    "Commits whose outcome could not be found out within commitOutcomeTimeoutMs (unknown), and how each turned out later.",
                    ["unknown", "committed", "failed"].map { (["outcome": $0], metrics.commitsUnknown[$0] ?? 0) })
        out.counter("panes_held_drop_marks_forgotten_total",
                    "Sessions whose held drops were to be read at their next attach on this node, forgotten past maxHeldDropMarks.",
                    [([:], metrics.heldDropMarksForgotten)])
        out.counter("panes_authentications_failed_total", "Credentials refused (a `connect` or `refreshToken`).",
                    [([:], metrics.authenticationsFailed)])
        out.counter("panes_authentications_limited_total",
                    "Credentials refused unchecked: their peer address failed too often (`authFailureBurst`).",
                    [([:], metrics.authenticationsLimited)])
        out.gauge("panes_auth_failure_addresses", "Peer addresses whose failed authentications are remembered.",
                  [([:], authFailures.count)])
        return out.text
    }
}

/// Writes Prometheus text exposition format.
public struct PrometheusText: Sendable {
    public private(set) var text = ""

    public init() {}

    public mutating func gauge(_ name: String, _ help: String, _ samples: [([String: String], Int)]) {
        family(name, "gauge", help, samples)
    }

    public mutating func counter(_ name: String, _ help: String, _ samples: [([String: String], Int)]) {
        family(name, "counter", help, samples)
    }

    private mutating func family(_ name: String, _ type: String, _ help: String, _ samples: [([String: String], Int)]) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for (labels, value) in samples { text += Self.sample(name, labels, "\(value)") }
    }

    mutating func append(_ lines: String) { text += lines }

    static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
