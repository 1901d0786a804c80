/// What a webhook event reports: the Standard Webhooks `type`, full-stop delimited.
public enum WebhookEventType: String, Sendable, CaseIterable, Hashable {
    case documentCreated = "document.created"
    case documentChanged = "document.changed"
    case documentRenamed = "document.renamed"
    case documentDeleted = "document.deleted"
    case preferenceChanged = "preference.changed"
    case sessionCreated = "session.created"
    case sessionDestroyed = "session.destroyed"
    /// A drag dropped on the "new window" zone spawned a window.
    case windowSpawned = "window.spawned"

    /// Changes of one document within `webhookCoalesceMs` go as one event of this type.
    public var coalesces: Bool { self == .documentChanged }
}
