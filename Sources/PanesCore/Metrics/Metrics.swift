/// Counters the hub keeps; the runtime renders them with the transport's own as Prometheus text.
public struct Metrics: Sendable {
    public var connectionsOpened = 0
    public var connectionsClosed = 0
    public var messagesOut = 0
    public var requests: [String: Int] = [:]
    public var errors: [String: Int] = [:]
    public var lifecycle: [String: Int] = [:]
}

extension Hub {
    /// The hub's part of `/metrics`, in Prometheus text exposition format.
    public func metricsText() -> String {
        var out = PrometheusText()
        out.gauge("panes_scenes", "Connected scenes by activation state.",
                  ActivationState.allCases.map { state in
                      (["state": state.rawValue], scenes.values.count(where: { $0.state == state }))
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
                    LifecycleEvent.allCases.map { (["event": $0.rawValue], metrics.lifecycle[$0.rawValue] ?? 0) })
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
