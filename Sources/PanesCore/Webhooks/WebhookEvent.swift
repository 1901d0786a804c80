/// One thing that happened, to be told to the endpoints that want it: what the hub writes to
/// the outbox in the same transaction as the change it reports (see `WebhookOutboxEntry`).
public struct WebhookEvent: Sendable, Equatable {
    /// Stable and unique: every delivery of this event to an endpoint, retries included,
    /// carries it as `webhook-id`, so a receiver can drop repeats. Letters, digits, `_`, `-`
    /// (no `.`: it separates the parts of what is signed).
    public var id: String
    public var type: WebhookEventType
    public var workspace: String
    /// Events with the same key reach each endpoint one after the other, in the order they
    /// were written: a document's events are keyed by the document (`documentKey`).
    public var orderingKey: String
    /// The revisions a document change spans (one change: from == to); nil for other events.
    public var revisions: ClosedRange<Int64>?
    /// The event's own fields, a JSON object (the body's `data`, with `workspace` and, for a
    /// document change, `revisions` added).
    public var data: JSONValue
    /// When the change happened (the body's `timestamp`), milliseconds since the epoch.
    public var createdAt: Millis

    public init(id: String, type: WebhookEventType, workspace: String, orderingKey: String,
                revisions: ClosedRange<Int64>? = nil, data: JSONValue = .object(JSONObject()), createdAt: Millis) {
        self.id = id
        self.type = type
        self.workspace = workspace
        self.orderingKey = orderingKey
        self.revisions = revisions
        self.data = data
        self.createdAt = createdAt
    }

    /// The ordering key of a document's events.
    public static func documentKey(workspace: String, document: String) -> String {
        "document:\(workspace.utf8.count):\(workspace)/\(document)"
    }

    /// One outbox entry per endpoint that wants this event. A document change is due
    /// `coalesceMs` after it happened, so the changes made meanwhile go with it.
    public func entries(for endpoints: [WebhookEndpoint], coalesceMs: Int) -> [WebhookOutboxEntry] {
        let due = type.coalesces ? createdAt + Millis(max(coalesceMs, 0)) : createdAt
        return endpoints.filter { $0.wants(type) }.map { WebhookOutboxEntry(endpoint: $0.id, event: self, dueAt: due) }
    }
}

/// One row of the outbox as written: an event for one endpoint, first due at `dueAt`.
public struct WebhookOutboxEntry: Sendable, Equatable {
    public var endpoint: String
    public var event: WebhookEvent
    public var dueAt: Millis

    public init(endpoint: String, event: WebhookEvent, dueAt: Millis) {
        self.endpoint = endpoint
        self.event = event
        self.dueAt = dueAt
    }
}
