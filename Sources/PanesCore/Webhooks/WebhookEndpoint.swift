/// A receiver of webhooks, as configured: where to send, the secret to sign with, and which
/// event types it wants.
///
/// ```json
/// "webhooks": [ { "id": "crm", "url": "https://crm.example/hooks/panes",
///                 "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "events": ["document.changed"] } ]
/// ```
/// The id names the endpoint in the outbox: events already written for it keep going to
/// whatever URL it has when they are delivered. An endpoint no longer configured gets
/// nothing more; what was written for it is dead-lettered.
public struct WebhookEndpoint: Sendable, Equatable {
    public var id: String
    public var url: String
    /// `whsec_` and the base64 of 24 to 64 random bytes (Standard Webhooks).
    public var secret: String
    /// Empty: every type.
    public var events: Set<WebhookEventType>

    public init(id: String, url: String, secret: String, events: Set<WebhookEventType> = []) {
        self.id = id
        self.url = url
        self.secret = secret
        self.events = events
    }

    public func wants(_ type: WebhookEventType) -> Bool { events.isEmpty || events.contains(type) }

    /// Reads one entry of the configuration file's `webhooks` array (`field` names it in
    /// errors). The secret's form is checked by the signer when the engine starts.
    public init(json: JSONValue, field: String) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid(field, "must be an object") }
        let fields = FieldReader(object, prefix: field)
        try fields.refuseUnknownKeys(["id", "url", "secret", "events"], what: "an endpoint key")
        id = try fields.requiredString("id", maxLength: 64)
        guard !id.isEmpty, id.utf8.allSatisfy({ Self.idBytes.contains($0) }) else {
            throw .invalid(fields.path("id"), "must be letters, digits, `_` or `-`")
        }
        url = try fields.requiredString("url", maxLength: 2_048)
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            throw .invalid(fields.path("url"), "must be an http:// or https:// URL")
        }
        secret = try fields.requiredString("secret", maxLength: 200)
        var events = Set<WebhookEventType>()
        for (index, value) in (try fields.array("events") ?? []).enumerated() {
            guard let name = value.stringValue, let type = WebhookEventType(rawValue: name) else {
                throw .invalid("\(fields.path("events"))[\(index)]",
                               "must be one of \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            events.insert(type)
        }
        self.events = events
    }

    private static let idBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-".utf8)
}
