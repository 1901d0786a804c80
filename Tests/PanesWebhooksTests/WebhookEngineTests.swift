import Foundation
import Logging
import PanesCore
import PanesPostgres
import PanesPostgresTestSupport
import PanesStorage
import PanesTestSupport
import PanesWebhooks
import Testing

/// The delivery engine against a real receiver (Tests/peers/webhook_receiver.py, which checks
/// signatures with Python's hmac) that fails, times out, answers 500 then 200, goes down for a
/// while: every event arrives, in order per document, repeated only as retries of the same id.
/// Retry, timeout and lease settings are compressed so each test takes seconds.
@Suite(.serialized) struct WebhookEngineTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    static func settings(_ change: (inout Settings) -> Void = { _ in }) -> Settings {
        var settings = Settings()
        settings.webhookRetryFirstMs = 50
        settings.webhookRetryMaxMs = 400
        settings.webhookGiveUpMs = 30_000
        settings.webhookTimeoutMs = 500
        settings.webhookConnectTimeoutMs = 500
        settings.webhookLeaseMs = 2_000
        settings.webhookPollMs = 50
        settings.webhookCoalesceMs = 0
        settings.webhookEndpointConcurrency = 4
        change(&settings)
        return settings
    }

    static func engine(_ outbox: any WebhookOutbox, _ endpoints: [WebhookEndpoint], settings: Settings = settings(),
                       node: String = "node-1") throws -> WebhookEngine {
        try WebhookEngine(outbox: outbox, configuration: .init(settings: settings, endpoints: endpoints, node: node),
                          logger: Logger(label: "test.webhooks"))
    }

    static var now: Millis { Millis(Date().timeIntervalSince1970 * 1000) }

    static func change(_ document: String, _ revision: Int64, at time: Millis = now) -> WebhookEvent {
        WebhookEvent(id: "evt_\(document)_\(revision)", type: .documentChanged, workspace: "team",
                     orderingKey: WebhookEvent.documentKey(workspace: "team", document: document), revisions: revision...revision,
                     data: ["document": .string(document)], createdAt: time)
    }

    /// Writes the events for the endpoints that want them, as the hub will.
    static func write(_ events: [WebhookEvent], to outbox: any WebhookOutbox, for endpoints: [WebhookEndpoint],
                      coalesceMs: Int = 0) throws {
        try outbox.insert(events.flatMap { $0.entries(for: endpoints, coalesceMs: coalesceMs) })
    }

    /// Per document, the ids in the order they first arrived, after dropping repeats of the one
    /// just before (a retry of the same delivery).
    static func orderPerDocument(_ receipts: [WebhookReceiver.Receipt]) -> [String: [String]] {
        var order: [String: [String]] = [:]
        for receipt in receipts {
            let document = receipt.data["document"] as? String ?? "?"
            if order[document]?.last != receipt.id { order[document, default: []].append(receipt.id) }
        }
        return order
    }

    enum OutboxKind: String, CaseIterable, CustomStringConvertible {
        case memory, sqlite, postgres
        var description: String { rawValue }
        static var tested: [OutboxKind] { TestDatabase.isSkipped ? [.memory, .sqlite] : allCases }
    }

    /// An outbox of a kind, and another handle on it (another node).
    final class Outboxes {
        let outbox: any WebhookOutbox
        let other: () throws -> any WebhookOutbox
        private let keep: [AnyObject]
        private let folder: URL?

        init(_ kind: OutboxKind) throws {
            switch kind {
            case .memory:
                let outbox = MemoryWebhookOutbox()
                self.outbox = outbox
                other = { outbox }
                keep = []
                folder = nil
            case .sqlite:
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let path = folder.appendingPathComponent("panes.sqlite").path
                keep = [try SQLiteStore(path: path)]
                outbox = try SQLiteWebhookOutbox(path: path)
                other = { try SQLiteWebhookOutbox(path: path) }
                self.folder = folder
            case .postgres:
                let database = try TestDatabase()
                keep = [database, try PostgresStore(url: database.url)]
                outbox = try PostgresWebhookOutbox(url: database.url)
                other = { try PostgresWebhookOutbox(url: database.url) }
                folder = nil
            }
        }

        deinit { if let folder { try? FileManager.default.removeItem(at: folder) } }
    }

    @Test(arguments: OutboxKind.tested)
    func everyEventArrivesInOrderPerDocumentThroughFailuresAndTimeouts(_ kind: OutboxKind) throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/hooks"), secret: Self.secret)
        // 500, then a hang past the timeout, then 200, then a 503 saying to wait, then fine.
        try receiver.plan(path: "/hooks", [["status": 500], ["status": 200, "delay_ms": 900], ["status": 200],
                                           ["status": 503, "retry_after": 0], ["status": 500], ["status": 200]],
                          fallback: ["status": 200])
        let outboxes = try Outboxes(kind)
        let events = (1...8).flatMap { revision in ["a", "b", "c"].map { Self.change($0, Int64(revision)) } }
        try Self.write(events, to: outboxes.outbox, for: [endpoint])
        let engine = try Self.engine(outboxes.outbox, [endpoint])
        engine.start()
        defer { engine.stop() }
        #expect(receiver.wait { receipts in Set(receipts.map(\.id)).count == events.count })
        #expect(try eventually { engine.metrics.pending == 0 && engine.metrics.inFlight == 0 })
        let receipts = receiver.receipts
        #expect(receipts.allSatisfy { $0.signatureValid }, "Python's hmac agrees with every signature")
        #expect(receipts.allSatisfy { $0.contentType == "application/json" && $0.type == "document.changed" })
        #expect(Set(receipts.map(\.id)) == Set(events.map(\.id)), "nothing but the events")
        let order = Self.orderPerDocument(receipts)
        for document in ["a", "b", "c"] {
            #expect(order[document] == (1...8).map { "evt_\(document)_\($0)" }, "\(document) in order, each once but for retries")
        }
        #expect(receipts.count > events.count, "the failures were retried")
        let metrics = engine.metrics
        #expect(metrics.attempts["delivered"] == events.count)
        #expect((metrics.attempts["http_error"] ?? 0) >= 3)
        #expect((metrics.attempts["timeout"] ?? 0) >= 1)
        #expect(metrics.latency.count == UInt64(events.count))
        let counts = try outboxes.outbox.counts()
        #expect(counts.pending == 0 && counts.dead == 0)
    }

    @Test func aReceiverThatIsDownForAWhileGetsEverythingOnceItIsBack() throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/hooks"), secret: Self.secret)
        receiver.stop()
        let outbox = MemoryWebhookOutbox()
        let engine = try Self.engine(outbox, [endpoint])
        engine.start()
        defer { engine.stop() }
        for revision in 1...5 {
            try Self.write([Self.change("a", Int64(revision)), Self.change("b", Int64(revision))], to: outbox, for: [endpoint])
            engine.wake()
            Thread.sleep(forTimeInterval: 0.2)
        }
        Thread.sleep(forTimeInterval: 1)
        #expect((engine.metrics.attempts["unreachable"] ?? 0) >= 4, "tried, refused, and kept")
        #expect(engine.metrics.attempts["delivered"] == nil)
        try receiver.start()
        #expect(receiver.wait { Set($0.map(\.id)).count == 10 })
        let order = Self.orderPerDocument(receiver.receipts)
        #expect(order["a"] == (1...5).map { "evt_a_\($0)" })
        #expect(order["b"] == (1...5).map { "evt_b_\($0)" })
        #expect(receiver.receipts.count == 10, "nothing twice: none of them reached it while it was down")
    }

    @Test func aDeliveryThatKeepsFailingIsGivenUpOnKeptAndNoLongerHoldsItsDocumentBack() throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/hooks"), secret: Self.secret)
        try receiver.plan(id: "evt_a_1", [], fallback: ["status": 500])
        let outbox = MemoryWebhookOutbox()
        try Self.write([Self.change("a", 1), Self.change("a", 2)], to: outbox, for: [endpoint])
        let engine = try Self.engine(outbox, [endpoint], settings: Self.settings { $0.webhookGiveUpMs = 1_200 })
        let start = Date()
        engine.start()
        defer { engine.stop() }
        #expect(receiver.wait { $0.contains { $0.id == "evt_a_2" } })
        let waited = Date().timeIntervalSince(start)
        #expect(waited >= 1.1, "the next event waited for the give-up (\(waited) s)")
        let receipts = receiver.receipts
        let lastOfFirst = try #require(receipts.lastIndex { $0.id == "evt_a_1" })
        let firstOfSecond = try #require(receipts.firstIndex { $0.id == "evt_a_2" })
        #expect(lastOfFirst < firstOfSecond)
        #expect(receipts.filter { $0.id == "evt_a_1" }.count >= 4, "retried with backoff until the give-up")
        let dead = try outbox.list(.dead, limit: 10)
        #expect(dead.map(\.event.id) == ["evt_a_1"])
        #expect(dead.first?.lastStatus == 500)
        #expect(dead.first?.lastError?.hasPrefix("HTTP 500") == true)
        #expect(try eventually { engine.metrics.deadLettered == 1 && engine.metrics.dead == 1 })
    }

    @Test func aReceiverAnswering410IsGivenUpOnAtOnce() throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/gone"), secret: Self.secret)
        try receiver.plan(path: "/gone", [], fallback: ["status": 410])
        let outbox = MemoryWebhookOutbox()
        try Self.write([Self.change("a", 1)], to: outbox, for: [endpoint])
        let engine = try Self.engine(outbox, [endpoint])
        engine.start()
        defer { engine.stop() }
        #expect(try eventually { outbox.counts().dead == 1 })
        #expect(receiver.receipts.count == 1)
    }

    @Test func aSlowReceiverHoldsOnlyItsOwnShareOfDeliveries() throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let slow = WebhookEndpoint(id: "slow", url: receiver.url("/slow"), secret: Self.secret)
        let fast = WebhookEndpoint(id: "fast", url: receiver.url("/fast"), secret: Self.secret)
        try receiver.plan(path: "/slow", [], fallback: ["status": 200, "delay_ms": 4_000])
        let outbox = MemoryWebhookOutbox()
        try Self.write((1...4).map { Self.change("s\($0)", 1) }, to: outbox, for: [slow])
        try Self.write((1...30).map { Self.change("f\($0)", 1) }, to: outbox, for: [fast])
        let engine = try Self.engine(outbox, [slow, fast], settings: Self.settings {
            $0.webhookTimeoutMs = 6_000
            $0.webhookLeaseMs = 10_000
            $0.webhookEndpointConcurrency = 2
        })
        engine.start()
        defer { engine.stop() }
        #expect(receiver.wait { $0.filter { $0.path == "/fast" }.count == 30 })
        // The slow receiver's third delivery can only start once one of its first two ended:
        // the fast one's thirty went while it held its two.
        #expect(receiver.receipts.filter { $0.path == "/slow" }.count <= 2)
        #expect(receiver.wait(timeout: 30) { $0.filter { $0.path == "/slow" }.count == 4 })
        #expect(try receiver.maxInFlight("/slow") == 2, "webhookEndpointConcurrency")
        #expect(try receiver.maxInFlight("/fast") <= 2)
    }

    @Test func changesWithinTheCoalescingWindowGoAsOneEventCarryingTheirRange() throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/hooks"), secret: Self.secret)
        let outbox = MemoryWebhookOutbox()
        let engine = try Self.engine(outbox, [endpoint], settings: Self.settings { $0.webhookCoalesceMs = 400 })
        engine.start()
        defer { engine.stop() }
        for revision in 1...5 {
            try Self.write([Self.change("a", Int64(revision))], to: outbox, for: [endpoint], coalesceMs: 400)
            engine.wake()
            Thread.sleep(forTimeInterval: 0.03)
        }
        Thread.sleep(forTimeInterval: 0.8)
        try Self.write([Self.change("a", 6)], to: outbox, for: [endpoint], coalesceMs: 400)
        engine.wake()
        #expect(receiver.wait { $0.count == 2 })
        let receipts = receiver.receipts
        #expect(receipts.map(\.revisions) == [1...5, 6...6])
        #expect(receipts.map(\.id) == ["evt_a_1", "evt_a_6"], "the range goes under its first change's id")
        #expect(receipts.first?.data["changes"] as? Int == 5)
        #expect(receipts.allSatisfy { $0.signatureValid })
    }

    @Test func redirectsAreNotFollowedAndARetryAfterIsWaitedFor() throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/moved"), secret: Self.secret)
        try receiver.plan(path: "/moved", [["status": 302], ["status": 429, "retry_after": 1]], fallback: ["status": 200],
                          location: "/elsewhere")
        let outbox = MemoryWebhookOutbox()
        try Self.write([Self.change("a", 1)], to: outbox, for: [endpoint])
        // Retry-After is kept up to webhookRetryMaxMs.
        let engine = try Self.engine(outbox, [endpoint], settings: Self.settings { $0.webhookRetryMaxMs = 2_000 })
        engine.start()
        defer { engine.stop() }
        #expect(receiver.wait { $0.count == 3 })
        let receipts = receiver.receipts
        #expect(receipts.allSatisfy { $0.path == "/moved" }, "the redirect's target was never asked")
        #expect(receipts[2].receivedAt - receipts[1].receivedAt >= 0.95, "Retry-After: 1 was kept")
        #expect(try eventually { engine.metrics.attempts["delivered"] == 1 && engine.metrics.attempts["http_error"] == 2 })
    }

    @Test func aHugeAnswerIsCutAtTheCapAndTheDeliveryStillCounts() throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/chatty"), secret: Self.secret)
        try receiver.plan(path: "/chatty", [], fallback: ["status": 200, "body_bytes": 5_000_000])
        let outbox = MemoryWebhookOutbox()
        try Self.write([Self.change("a", 1), Self.change("a", 2)], to: outbox, for: [endpoint])
        let engine = try Self.engine(outbox, [endpoint], settings: Self.settings { $0.webhookMaxResponseBytes = 1_024 })
        engine.start()
        defer { engine.stop() }
        #expect(try eventually { engine.metrics.attempts["delivered"] == 2 })
        #expect(receiver.receipts.count == 2, "each once")
    }

    @Test func aReceiverWhoseCertificateDoesNotVerifyGetsNothing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cert = folder.appendingPathComponent("cert.pem").path
        let key = folder.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                             "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        let receiver = try WebhookReceiver(secret: Self.secret, tls: (cert, key))
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/hooks"), secret: Self.secret)
        let outbox = MemoryWebhookOutbox()
        try Self.write([Self.change("a", 1)], to: outbox, for: [endpoint])
        let engine = try Self.engine(outbox, [endpoint])
        engine.start()
        defer { engine.stop() }
        #expect(try eventually { (engine.metrics.attempts["tls_error"] ?? 0) >= 2 })
        #expect(receiver.receipts.isEmpty, "a self-signed certificate is not trusted")
        #expect(try outbox.list(.pending, limit: 1).first?.lastError?.hasPrefix("TLS") == true)
    }

    /// Two nodes on one outbox: each event is delivered once, by one of them.
    @Test(arguments: OutboxKind.tested.filter { $0 != .sqlite })
    func twoEnginesSharingAnOutboxDeliverEachEventOnce(_ kind: OutboxKind) throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/hooks"), secret: Self.secret)
        let outboxes = try Outboxes(kind)
        let events = (1...10).flatMap { revision in (1...12).map { Self.change("d\($0)", Int64(revision)) } }
        try Self.write(events, to: outboxes.outbox, for: [endpoint])
        let first = try Self.engine(outboxes.outbox, [endpoint], node: "node-1")
        let second = try Self.engine(try outboxes.other(), [endpoint], node: "node-2")
        first.start()
        second.start()
        defer {
            first.stop()
            second.stop()
        }
        #expect(receiver.wait { Set($0.map(\.id)).count == events.count })
        Thread.sleep(forTimeInterval: 0.3)
        let receipts = receiver.receipts
        #expect(receipts.count == events.count, "no event twice")
        let order = Self.orderPerDocument(receipts)
        for document in 1...12 { #expect(order["d\(document)"] == (1...10).map { "evt_d\(document)_\($0)" }) }
        #expect((first.metrics.attempts["delivered"] ?? 0) > 0 && (second.metrics.attempts["delivered"] ?? 0) > 0, "both took part")
    }

    /// A node that stops mid-delivery (its attempt's outcome never recorded) leaves a lease that
    /// runs out; another node then delivers the event, with the same id.
    @Test(arguments: OutboxKind.tested)
    func aDeliveryLeftMidwayIsMadeByAnotherNodeOnceItsLeaseRunsOut(_ kind: OutboxKind) throws {
        let receiver = try WebhookReceiver(secret: Self.secret)
        let endpoint = WebhookEndpoint(id: "crm", url: receiver.url("/hooks"), secret: Self.secret)
        try receiver.plan(path: "/hooks", [["status": 200, "delay_ms": 3_000]], fallback: ["status": 200])
        let outboxes = try Outboxes(kind)
        try Self.write([Self.change("a", 1), Self.change("a", 2)], to: outboxes.outbox, for: [endpoint])
        let settings = Self.settings {
            $0.webhookTimeoutMs = 5_000
            $0.webhookLeaseMs = 1_000 + 5_000
        }
        let dying = try Self.engine(outboxes.outbox, [endpoint], settings: settings, node: "dying")
        dying.start()
        #expect(receiver.wait { $0.count == 1 })
        dying.stop()
        let heir = try Self.engine(try outboxes.other(), [endpoint], settings: settings, node: "heir")
        heir.start()
        defer { heir.stop() }
        #expect(receiver.wait(timeout: 30) { $0.filter { $0.id == "evt_a_2" }.count == 1 })
        let ids = receiver.receipts.map(\.id)
        #expect(ids == ["evt_a_1", "evt_a_1", "evt_a_2"], "the same id again, then the next")
    }
}
