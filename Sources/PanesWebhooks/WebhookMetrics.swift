public import PanesCore

/// What the delivery engine counts, for `/metrics`: a copy, taken under the engine's lock.
public struct WebhookMetrics: Sendable {
    /// Rows in the outbox (all nodes' when it is shared), looked at about once a second.
    public var pending = 0
    public var dead = 0
    /// Deliveries this node has under way.
    public var inFlight = 0
    /// Attempts this node made, by outcome (`WebhookResponse.labels`).
    public var attempts: [String: Int] = [:]
    /// Deliveries this node gave up on.
    public var deadLettered = 0
    /// From a change to its delivery's 2xx (coalescing and retries included).
    public var latency = Histogram()

    public init() {}

    /// The `panes_webhook_*` families.
    public func render(into text: inout PrometheusText) {
        text.gauge("panes_webhook_outbox_pending", "Webhook deliveries waiting in the outbox (every node's).",
                   [([:], pending)])
        text.gauge("panes_webhook_outbox_dead", "Webhook deliveries given up on and kept for inspection.", [([:], dead)])
        text.gauge("panes_webhook_in_flight", "Webhook deliveries this node has under way.", [([:], inFlight)])
        text.counter("panes_webhook_attempts_total", "Webhook delivery attempts this node made, by outcome.",
                     WebhookResponse.labels.map { (["outcome": $0], attempts[$0] ?? 0) })
        text.counter("panes_webhook_dead_lettered_total", "Webhook deliveries this node gave up on.", [([:], deadLettered)])
        text.histogram("panes_webhook_delivery_latency_seconds",
                       "From a change to the receiver's 2xx for the event reporting it (coalescing and retries included).",
                       [([:], latency)])
    }
}
