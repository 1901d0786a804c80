import PanesCore
import Testing

/// The configuration file's `webhooks` entries, and which outbox rows an event makes.
@Suite struct WebhookEndpointTests {
    @Test func anEntryIsReadWhole() throws {
        let endpoint = try WebhookEndpoint(json: ["id": "crm", "url": "https://crm.example/hooks", "secret": "whsec_x",
                                                  "events": ["document.changed", "session.created"]], field: "webhooks[0]")
        #expect(endpoint == WebhookEndpoint(id: "crm", url: "https://crm.example/hooks", secret: "whsec_x",
                                            events: [.documentChanged, .sessionCreated]))
        #expect(endpoint.wants(.documentChanged) && !endpoint.wants(.documentDeleted))
        let everything = try WebhookEndpoint(json: ["id": "all", "url": "http://127.0.0.1:9/x", "secret": "s"], field: "w")
        #expect(WebhookEventType.allCases.allSatisfy(everything.wants))
    }

    static let bad: [(JSONValue, String)] = [
        (.string("x"), "webhooks[0]"),
        (["url": "https://a", "secret": "s"], "webhooks[0].id"),
        (["id": "a b", "url": "https://a", "secret": "s"], "webhooks[0].id"),
        (["id": "a", "url": "ftp://a", "secret": "s"], "webhooks[0].url"),
        (["id": "a", "url": "https://a"], "webhooks[0].secret"),
        (["id": "a", "url": "https://a", "secret": "s", "events": ["document.edited"]], "webhooks[0].events[0]"),
        (["id": "a", "url": "https://a", "secret": "s", "retries": 3], "webhooks[0].retries"),
    ]

    @Test(arguments: bad)
    func aBadEntryIsRefusedNamingItsField(_ json: JSONValue, _ field: String) {
        do {
            _ = try WebhookEndpoint(json: json, field: "webhooks[0]")
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.field == field)
        }
    }

    @Test func anEventMakesOneEntryPerEndpointThatWantsItAndADocumentChangeWaitsForItsWindow() {
        let crm = WebhookEndpoint(id: "crm", url: "https://a", secret: "s", events: [.documentChanged])
        let audit = WebhookEndpoint(id: "audit", url: "https://b", secret: "s")
        let sessions = WebhookEndpoint(id: "sessions", url: "https://c", secret: "s", events: [.sessionCreated])
        let change = WebhookEvent(id: "evt_1", type: .documentChanged, workspace: "w",
                                  orderingKey: WebhookEvent.documentKey(workspace: "w", document: "d"), revisions: 3...3, createdAt: 1_000)
        let entries = change.entries(for: [crm, audit, sessions], coalesceMs: 250)
        #expect(entries.map(\.endpoint) == ["crm", "audit"])
        #expect(entries.allSatisfy { $0.dueAt == 1_250 && $0.event == change })
        var rename = change
        rename.type = .documentRenamed
        #expect(rename.entries(for: [crm, audit], coalesceMs: 250).map(\.dueAt) == [1_000])
    }

    @Test func documentKeysOfDifferentWorkspacesNeverMeet() {
        #expect(WebhookEvent.documentKey(workspace: "a/b", document: "c") != WebhookEvent.documentKey(workspace: "a", document: "b/c"))
    }
}
