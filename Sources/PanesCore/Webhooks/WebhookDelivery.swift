/// An event for one endpoint as the outbox holds it: claimed for an attempt, or listed for
/// inspection.
public struct WebhookDelivery: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Waiting for its next attempt (or under way, while leased).
        case pending
        /// Given up on (`webhookGiveUpMs`, a 410, an endpoint no longer configured): kept for
        /// inspection, and no longer holding back the events after it.
        case dead
    }

    /// The outbox's own number for the row; for one endpoint and ordering key, rows are
    /// delivered in this order.
    public var seq: Int64
    public var endpoint: String
    public var event: WebhookEvent
    public var state: State
    /// Attempts started, this one included when it was just claimed.
    public var attempts: Int
    public var nextAttemptAt: Millis
    /// When the first attempt was claimed: `webhookGiveUpMs` counts from it.
    public var firstAttemptAt: Millis?
    /// The node that holds the claim and until when.
    public var leaseOwner: String?
    public var leaseUntil: Millis?
    /// What the last attempt got: an HTTP status, and what went wrong.
    public var lastStatus: Int?
    public var lastError: String?
    /// Changes this delivery carries (more than one once coalesced).
    public var changes: Int

    public init(seq: Int64, endpoint: String, event: WebhookEvent, state: State = .pending, attempts: Int = 0,
                nextAttemptAt: Millis, firstAttemptAt: Millis? = nil, leaseOwner: String? = nil, leaseUntil: Millis? = nil,
                lastStatus: Int? = nil, lastError: String? = nil, changes: Int = 1) {
        self.seq = seq
        self.endpoint = endpoint
        self.event = event
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.firstAttemptAt = firstAttemptAt
        self.leaseOwner = leaseOwner
        self.leaseUntil = leaseUntil
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.changes = changes
    }

    /// The request body: `{"type", "timestamp", "data"}` as Standard Webhooks recommends, the
    /// same bytes for every attempt (everything in it is fixed once the delivery was first
    /// claimed). `timestamp` is when the change happened, ISO 8601 in UTC.
    public var payload: JSONValue {
        var data = event.data.objectValue ?? [:]
        data["workspace"] = .string(event.workspace)
        if let revisions = event.revisions {
            data["revisions"] = .object(["from": .int(revisions.lowerBound), "to": .int(revisions.upperBound)])
            data["changes"] = .int(Int64(changes))
        }
        return .object(["type": .string(event.type.rawValue), "timestamp": .string(Self.iso8601(event.createdAt)),
                        "data": .object(data)])
    }

    /// `2026-11-26T17:00:00.123Z`, without Foundation (the core has none).
    static func iso8601(_ millis: Millis) -> String {
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let fraction = Int(millis - seconds * 1000)
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(width - text.count, 0)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(Int64(secondOfDay / 3_600), 2)):"
            + "\(pad(Int64(secondOfDay / 60 % 60), 2)):\(pad(Int64(secondOfDay % 60), 2)).\(pad(Int64(fraction), 3))Z"
    }
}
