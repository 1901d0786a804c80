import PanesCore
import PanesCoreTestSupport
import Testing

/// The HTTP API in the hub: a request is a service scene for its length, its writes go the way
/// a window's do, and the webhook event of a change is in the change's own store write.
@Suite struct HubAPITests {
    static let endpoint = WebhookEndpoint(id: "crm", url: "http://127.0.0.1:9/hooks", secret: "whsec_x")

    static func call(_ method: String, _ path: String, body: JSONValue? = nil, access: APIKey.Access = .write)
        throws -> APICall {
        let route = try APIRoute(method: method, path: "/api/v1/workspaces/default" + path, query: [], body: body,
                                 idempotencyKey: nil, newOpId: "http-1")
        return APICall(route: route, key: APIKey(id: "crm", sha256: String(repeating: "a", count: 64),
                                                 workspaces: ["*"], access: access, name: "CRM"))
    }

    static func service(_ n: UInt64) -> ConnectionID { ConnectionID(Hub.serviceConnectionBit | n) }

    @Test func anEditOfADocumentNobodyHoldsLoadsItCommitsWithItsEventAndLetsItGo() throws {
        var harness = HubHarness(webhookEndpoints: [Self.endpoint])
        let (a, _) = harness.connect(name: "alice")
        let id = harness.createDocument(a, text: "hi")
        harness.completesCommits = false
        let started = harness.run(.api(Self.service(1), try Self.call("POST", "/documents/\(id)/operations",
                                                                      body: ["revision": 0, "operation": [2, "!"]])))
        guard case .commit(let commit)? = started.last else {
            Issue.record("no commit: \(started)")
            return
        }
        // The event goes in the commit of the change it reports: written with it, or not at all.
        #expect(commit.commands.contains { if case .appendOperation = $0 { true } else { false } })
        let events = commit.commands.compactMap { if case .enqueueWebhooks(let entries) = $0 { entries } else { nil } }.flatMap { $0 }
        #expect(events.map(\.event.type) == [.documentChanged] && events.first?.event.revisions == 1...1)
        #expect(events.first?.event.data["actor"]?["user"] == "api:crm")
        #expect(started.messages(to: Self.service(1)).isEmpty)
        let done = harness.completeCommits()
        #expect(done.messages(to: Self.service(1)).first?["result"]?["revision"] == 1)
        #expect(harness.text(of: id) == "hi!")  // durable
        #expect(harness.hub.documentCounts.loaded == 0)  // nobody holds it: it went after the commit
        let read = harness.run(.api(Self.service(2), try Self.call("GET", "/documents/\(id)", access: .read)))
        #expect(read.messages(to: Self.service(2)).first?["result"]?["text"] == "hi!")
    }

    @Test func aReadKeyIsRefusedEveryWriteInTheHubTooAndItsRefusalWritesNothing() throws {
        var harness = HubHarness(webhookEndpoints: [Self.endpoint])
        let (a, _) = harness.connect(name: "alice")
        let id = harness.createDocument(a, text: "hi")
        let refused = harness.run(.api(Self.service(1), try Self.call("DELETE", "/documents/\(id)", access: .read)))
        #expect(refused.messages(to: Self.service(1)).first?["error"]?["code"] == "forbidden")
        #expect(refused.persisted.isEmpty)
    }

    @Test func aDocumentCreatedThroughTheAPIHasItsEventInTheSamePersist() throws {
        var harness = HubHarness(webhookEndpoints: [Self.endpoint])
        let (watcher, _) = harness.connect(name: "alice")
        _ = harness.request(watcher, "observeDocuments")
        let effects = harness.run(.api(Self.service(1), try Self.call("POST", "/documents", body: ["title": "New"])))
        let persists = effects.compactMap { if case .persist(let commands) = $0 { commands } else { nil } }
        #expect(persists.count == 1)
        #expect(persists.first?.contains { if case .createDocument = $0 { true } else { false } } == true)
        #expect(persists.first?.contains { if case .enqueueWebhooks(let e) = $0 { e.first?.event.type == .documentCreated } else { false } } == true)
        #expect(effects.events(to: watcher, named: "documentsChanged").count == 1)
        #expect(effects.messages(to: Self.service(1)).first?["result"]?["document"]?["createdBy"] == "api:crm")
    }

    @Test func aDrainAnswersAnAPIWriteUnderWayAndThenHasNothingLeft() throws {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let id = harness.createDocument(a)
        harness.completesCommits = false
        _ = harness.run(.api(Self.service(1), try Self.call("POST", "/documents/\(id)/operations",
                                                          body: ["revision": 0, "operation": ["x"]])))
        let draining = harness.run(.drain)
        #expect(draining.messages(to: Self.service(1)).isEmpty)  // no `goingAway` for it
        _ = harness.run(.closed(a, abnormal: false))
        #expect(!harness.hub.drained)  // the write is under way
        let done = harness.completeCommits()
        #expect(done.messages(to: Self.service(1)).first?["result"]?["revision"] == 1)
        #expect(harness.hub.drained)
    }

    @Test func withoutEndpointsNoEventIsWritten() throws {
        var harness = HubHarness()
        let effects = harness.run(.api(Self.service(1), try Self.call("POST", "/documents", body: ["title": "New"])))
        #expect(!effects.persisted.contains { if case .enqueueWebhooks = $0 { true } else { false } })
    }
}
