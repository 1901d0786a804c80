import Foundation
import PanesCore
import PanesJSON
import PanesPostgres
import PanesPostgresTestSupport
import PanesServerTestSupport
import PanesStorage
import PanesTestSupport
import Testing

/// The real binary delivering its outbox to a real receiver: what it delivers shows in
/// `/metrics`, and `kill -9` of the node that is delivering loses nothing (the event goes again,
/// with its id, from the restarted server or another node). Events are written straight into
/// the outbox here; those the hub writes with real changes are tested in Tests/api.
@Suite(.serialized) struct WebhooksEndToEndTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    static func config(_ receiver: WebhookReceiver, lease: Int = 2_500) -> JSONValue {
        ["webhooks": [["id": "crm", "url": .string(receiver.url("/hooks")), "secret": .string(secret)]],
         "settings": ["webhookPollMs": 50, "webhookRetryFirstMs": 50, "webhookRetryMaxMs": 400, "webhookTimeoutMs": 2_000,
                      "webhookLeaseMs": .int(Int64(lease)), "webhookCoalesceMs": 0]]
    }

    static func outbox(_ server: ServerProcess) throws -> any WebhookOutbox {
        switch server.store {
        case .sqlite: try SQLiteWebhookOutbox(path: server.data.appendingPathComponent("panes.sqlite").path)
        case .postgres: try PostgresWebhookOutbox(url: server.database!.url)
        }
    }

    static func change(_ document: String, _ revision: Int64) -> WebhookOutboxEntry {
        let event = WebhookEvent(id: "evt_\(document)_\(revision)", type: .documentChanged, workspace: "team",
                                 orderingKey: WebhookEvent.documentKey(workspace: "team", document: document),
                                 revisions: revision...revision, data: ["document": .string(document)],
                                 createdAt: Millis(Date().timeIntervalSince1970 * 1000))
        return WebhookOutboxEntry(endpoint: "crm", event: event, dueAt: event.createdAt)
    }

    @Test(arguments: TestStore.endToEnd)
    func theServerDeliversItsOutboxAndCountsItInMetrics(_ store: TestStore) throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        try receiver.plan(path: "/hooks", [["status": 500]], fallback: ["status": 200])
        let server = try ServerProcess(store: store, config: Self.config(receiver))
        try Self.outbox(server).insert([Self.change("a", 1), Self.change("a", 2), Self.change("b", 1)])
        #expect(receiver.wait { Set($0.map(\.id)).count == 3 })
        #expect(receiver.receipts.allSatisfy { $0.signatureValid })
        #expect(eventually {
            guard let metrics = try? PrometheusParser(server.http("/metrics").body) else { return false }
            return metrics.values("panes_webhook_attempts_total", ["outcome": "delivered"]) == [3]
                && metrics.values("panes_webhook_attempts_total", ["outcome": "http_error"]) == [1]
                && metrics.values("panes_webhook_outbox_pending") == [0]
                && metrics.values("panes_webhook_delivery_latency_seconds_count") == [3]
        })
    }

    @Test func aBadWebhookSecretStopsTheStartNamingTheField() throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let config: JSONValue = ["webhooks": [["id": "crm", "url": .string(receiver.url("/hooks")), "secret": "whsec_c2hvcnQ="]]]
        do {
            _ = try ServerProcess(config: config)
            Issue.record("the server started")
        } catch ServerProcessError.didNotStart(let log) {
            #expect(log.contains("webhooks[0].secret"), "\(log)")
            #expect(log.contains("must hold 24 to 64 bytes"))
        }
    }

    /// SQLite: the server is killed while a delivery is under way (the receiver holds it), then
    /// started again on its data: once the lease runs out, the event goes again, then the next.
    @Test func killingTheServerMidDeliveryLosesNothing() throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        try receiver.plan(path: "/hooks", [["status": 200, "delay_ms": 1_500]], fallback: ["status": 200])
        let server = try ServerProcess(config: Self.config(receiver))
        try Self.outbox(server).insert([Self.change("a", 1), Self.change("a", 2)])
        #expect(receiver.wait { $0.count == 1 })
        server.kill(SIGKILL)
        server.wait()
        let restarted = try server.restarted(config: Self.config(receiver))
        defer { restarted.kill(SIGTERM) }
        #expect(receiver.wait(timeout: 30) { $0.contains { $0.id == "evt_a_2" } })
        #expect(receiver.receipts.map(\.id) == ["evt_a_1", "evt_a_1", "evt_a_2"])
        #expect(try eventually { try Self.outbox(restarted).counts() == (pending: 0, dead: 0) })
    }

    /// PostgreSQL: two nodes share the outbox; the one delivering is killed, the other delivers
    /// the event once the lease runs out, with the same id, then the next.
    @Test func killingTheDeliveringNodeLetsAnotherDeliver() throws {
        guard !TestDatabase.isSkipped else { return }
        let receiver = try WebhookReceiver(secret: Self.secret)
        try receiver.plan(path: "/hooks", [["status": 200, "delay_ms": 1_500]], fallback: ["status": 200])
        let first = try ServerProcess(store: .postgres, config: Self.config(receiver))
        try Self.outbox(first).insert([Self.change("a", 1), Self.change("a", 2)])
        #expect(receiver.wait { $0.count == 1 })
        let second = try ServerProcess(store: .postgres, config: Self.config(receiver), database: first.database)
        defer { second.kill(SIGTERM) }
        first.kill(SIGKILL)
        first.wait()
        #expect(receiver.wait(timeout: 30) { $0.contains { $0.id == "evt_a_2" } })
        #expect(receiver.receipts.map(\.id) == ["evt_a_1", "evt_a_1", "evt_a_2"])
    }
}
