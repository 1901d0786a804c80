import Foundation
import PanesCore
import PanesPostgresTestSupport
@testable import PanesPostgres
@testable import PanesStorage
import PanesStorageTestSupport
import Testing

/// Every webhook outbox (memory, SQLite, PostgreSQL) keeps the same rules: claims hand out the
/// first undelivered event of each document only, leases keep two claimers apart, outcomes are
/// fenced by the lease, given-up rows stop holding the next back, and a first claim folds a
/// document's changes into one event. Times are the wall clock's (PostgreSQL uses its own).
@Suite struct WebhookOutboxConformanceTests {
    /// An outbox under test, and a second handle on the same rows (another node).
    final class Harness {
        let outbox: any WebhookOutbox
        private let makeOther: () throws -> any WebhookOutbox
        private let sqliteFile: TemporaryDatabase?
        private let database: TestDatabase?
        private let store: AnyObject?

        init(_ kind: StoreKind) throws {
            switch kind {
            case .memory:
                let outbox = MemoryWebhookOutbox()
                self.outbox = outbox
                makeOther = { outbox }
                sqliteFile = nil
                database = nil
                store = nil
            case .sqlite:
                let sqliteFile = try TemporaryDatabase()
                let path = sqliteFile.path
                store = try SQLiteStore(path: path)
                outbox = try SQLiteWebhookOutbox(path: path)
                makeOther = { try SQLiteWebhookOutbox(path: path) }
                self.sqliteFile = sqliteFile
                database = nil
            case .postgres:
                let database = try TestDatabase()
                store = try PostgresStore(url: database.url)
                outbox = try PostgresWebhookOutbox(url: database.url)
                makeOther = { try PostgresWebhookOutbox(url: database.url) }
                self.database = database
                sqliteFile = nil
            }
        }

        func other() throws -> any WebhookOutbox { try makeOther() }
    }

    static var now: Millis { Millis(Date().timeIntervalSince1970 * 1000) }

    static func change(_ document: String, _ revision: Int64, at time: Millis = now, id: String? = nil) -> WebhookEvent {
        WebhookEvent(id: id ?? "evt_\(document)_\(revision)", type: .documentChanged, workspace: "team",
                     orderingKey: WebhookEvent.documentKey(workspace: "team", document: document), revisions: revision...revision,
                     data: ["document": .string(document), "length": .int(revision * 10)], createdAt: time)
    }

    static func event(_ type: WebhookEventType, _ document: String, at time: Millis = now, id: String) -> WebhookEvent {
        WebhookEvent(id: id, type: type, workspace: "team", orderingKey: WebhookEvent.documentKey(workspace: "team", document: document),
                     data: ["document": .string(document)], createdAt: time)
    }

    static func entry(_ event: WebhookEvent, _ endpoint: String = "crm", due: Millis? = nil) -> WebhookOutboxEntry {
        WebhookOutboxEntry(endpoint: endpoint, event: event, dueAt: due ?? event.createdAt)
    }

    @Test(arguments: StoreKind.tested)
    func claimsHandOutTheFirstUndeliveredEventOfEachDocumentInOrder(_ kind: StoreKind) throws {
        let harness = try Harness(kind)
        let outbox = harness.outbox
        let t = Self.now - 1_000
        try outbox.insert([Self.entry(Self.change("a", 1, at: t)), Self.entry(Self.change("a", 2, at: t)),
                           Self.entry(Self.change("b", 1, at: t + 1)), Self.entry(Self.change("a", 3, at: t + 2)),
                           Self.entry(Self.change("c", 1, at: t + 3), "other")])
        // Written twice (a retried batch): kept once.
        try outbox.insert([Self.entry(Self.change("a", 1, at: t))])
        #expect(try outbox.counts() == (pending: 5, dead: 0))
        let first = try outbox.claim(endpoint: "crm", limit: 10, now: Self.now, owner: "n1", leaseMs: 60_000, coalesceMs: 0)
        #expect(first.map(\.event.id) == ["evt_a_1", "evt_b_1"])
        #expect(first.allSatisfy { $0.attempts == 1 && $0.leaseOwner == "n1" && $0.firstAttemptAt != nil })
        #expect(try outbox.claim(endpoint: "crm", limit: 10, now: Self.now, owner: "n1", leaseMs: 60_000, coalesceMs: 0).isEmpty,
                "leased heads are not handed out again, and what follows them waits")
        try outbox.markDelivered(seq: first[0].seq)
        let second = try outbox.claim(endpoint: "crm", limit: 10, now: Self.now, owner: "n1", leaseMs: 60_000, coalesceMs: 0)
        #expect(second.map(\.event.id) == ["evt_a_2"])
        #expect(try outbox.pendingEndpoints() == ["crm", "other"])
        #expect(try outbox.claim(endpoint: "other", limit: 1, now: Self.now, owner: "n1", leaseMs: 60_000, coalesceMs: 0)
            .map(\.event.id) == ["evt_c_1"])
        #expect(try outbox.counts() == (pending: 4, dead: 0))
    }

    @Test(arguments: StoreKind.tested)
    func aLeaseKeepsOtherClaimersOffUntilItRunsOut(_ kind: StoreKind) throws {
        let harness = try Harness(kind)
        let other = try harness.other()
        try harness.outbox.insert([Self.entry(Self.change("a", 1, at: Self.now - 10))])
        let mine = try harness.outbox.claim(endpoint: "crm", limit: 5, now: Self.now, owner: "n1", leaseMs: 400, coalesceMs: 0)
        #expect(mine.count == 1)
        #expect(try other.claim(endpoint: "crm", limit: 5, now: Self.now, owner: "n2", leaseMs: 400, coalesceMs: 0).isEmpty)
        Thread.sleep(forTimeInterval: 0.6)
        let theirs = try other.claim(endpoint: "crm", limit: 5, now: Self.now, owner: "n2", leaseMs: 60_000, coalesceMs: 0)
        #expect(theirs.map(\.event.id) == ["evt_a_1"], "the same event, once the first lease ran out")
        #expect(theirs.first?.attempts == 2)
        #expect(theirs.first?.firstAttemptAt == mine.first?.firstAttemptAt, "give-up counts from the first attempt")
        // The first claimer's late outcome no longer counts; the holder's does.
        #expect(try !harness.outbox.reschedule(seq: mine[0].seq, owner: "n1", at: Self.now, status: 500, error: "late"))
        #expect(try !harness.outbox.deadLetter(seq: mine[0].seq, owner: "n1", at: Self.now, status: 500, error: "late"))
        #expect(try other.reschedule(seq: mine[0].seq, owner: "n2", at: Self.now + 60_000, status: 503, error: "HTTP 503"))
        let listed = try harness.outbox.list(.pending, limit: 10)
        #expect(listed.first?.lastStatus == 503 && listed.first?.lastError == "HTTP 503" && listed.first?.leaseOwner == nil)
        #expect(try harness.outbox.claim(endpoint: "crm", limit: 5, now: Self.now, owner: "n1", leaseMs: 400, coalesceMs: 0).isEmpty,
                "not due until its retry time")
    }

    @Test(arguments: StoreKind.tested)
    func aDeadLetterIsKeptForInspectionAndNoLongerHoldsItsDocumentBack(_ kind: StoreKind) throws {
        let harness = try Harness(kind)
        let outbox = harness.outbox
        try outbox.insert([Self.entry(Self.change("a", 1, at: Self.now - 10)), Self.entry(Self.change("a", 2, at: Self.now - 10))])
        let first = try outbox.claim(endpoint: "crm", limit: 5, now: Self.now, owner: "n1", leaseMs: 60_000, coalesceMs: 0)
        #expect(try outbox.deadLetter(seq: first[0].seq, owner: "n1", at: Self.now, status: 410, error: "gone"))
        #expect(try outbox.counts() == (pending: 1, dead: 1))
        let dead = try outbox.list(.dead, limit: 10)
        #expect(dead.map(\.event.id) == ["evt_a_1"])
        #expect(dead.first?.lastStatus == 410 && dead.first?.lastError == "gone" && dead.first?.attempts == 1)
        #expect(dead.first?.event == first[0].event, "the event is kept as it was")
        let next = try outbox.claim(endpoint: "crm", limit: 5, now: Self.now, owner: "n1", leaseMs: 60_000, coalesceMs: 0)
        #expect(next.map(\.event.id) == ["evt_a_2"])
        // Requeued, it goes again with its attempts counted (and so is never folded again).
        try outbox.markDelivered(seq: next[0].seq)
        #expect(try outbox.requeue(seq: first[0].seq, now: Self.now))
        #expect(try !outbox.requeue(seq: first[0].seq, now: Self.now), "only a dead one")
        let again = try outbox.claim(endpoint: "crm", limit: 5, now: Self.now + 10, owner: "n1", leaseMs: 60_000, coalesceMs: 0)
        #expect(again.map(\.event.id) == ["evt_a_1"])
        #expect(again.first?.attempts == 2)
    }

    @Test(arguments: StoreKind.tested)
    func aFirstClaimFoldsTheDocumentsChangesWithinTheWindowIntoOneEvent(_ kind: StoreKind) throws {
        let harness = try Harness(kind)
        let outbox = harness.outbox
        let t = Self.now - 5_000
        try outbox.insert([
            Self.entry(Self.change("a", 1, at: t)), Self.entry(Self.change("a", 2, at: t + 100)),
            Self.entry(Self.change("a", 3, at: t + 300)),
            // Past the window: its own event.
            Self.entry(Self.change("a", 4, at: t + 900)),
            Self.entry(Self.change("b", 1, at: t)), Self.entry(Self.event(.documentRenamed, "b", at: t + 10, id: "evt_b_rename")),
            Self.entry(Self.change("b", 2, at: t + 20)),
        ])
        let claimed = try outbox.claim(endpoint: "crm", limit: 10, now: Self.now, owner: "n1", leaseMs: 60_000, coalesceMs: 500)
        #expect(claimed.map(\.event.id) == ["evt_a_1", "evt_b_1"])
        #expect(claimed[0].event.revisions == 1...3)
        #expect(claimed[0].changes == 3)
        #expect(claimed[0].event.data["length"] == .int(30), "the latest change's fields")
        #expect(claimed[1].event.revisions == 1...1, "a rename in between keeps them apart")
        #expect(try outbox.counts().pending == 5)
        // What a retry sends is what was claimed: nothing more folds into an attempted delivery.
        try outbox.insert([Self.entry(Self.change("a", 5, at: t + 1))])
        #expect(try outbox.reschedule(seq: claimed[0].seq, owner: "n1", at: Self.now, status: 500, error: "HTTP 500"))
        let retry = try outbox.claim(endpoint: "crm", limit: 10, now: Self.now + 1, owner: "n1", leaseMs: 60_000, coalesceMs: 500)
        #expect(retry.first { $0.event.id == "evt_a_1" }?.event.revisions == 1...3)
        #expect(try outbox.list(.pending, limit: 10).first { $0.event.id == "evt_a_1" }?.changes == 3, "stored folded")
    }

    @Test(arguments: StoreKind.tested)
    func nextDueLooksOnlyAtTheFirstOfEachLineAndCountsLeases(_ kind: StoreKind) throws {
        let harness = try Harness(kind)
        let outbox = harness.outbox
        #expect(try outbox.nextDue(now: Self.now) == nil)
        let later = Self.now + 60_000
        try outbox.insert([Self.entry(Self.change("a", 1, at: Self.now), due: later),
                           // Due now, but behind a.1: not claimable, so not a reason to wake.
                           Self.entry(Self.change("a", 2, at: Self.now), due: Self.now - 5)])
        let due = try #require(try outbox.nextDue(now: Self.now))
        #expect(abs(due - later) < 2_000)
        try outbox.insert([Self.entry(Self.change("b", 1, at: Self.now - 10))])
        let claimed = try outbox.claim(endpoint: "crm", limit: 5, now: Self.now, owner: "n1", leaseMs: 30_000, coalesceMs: 0)
        #expect(claimed.map(\.event.id) == ["evt_b_1"])
        let leaseEnd = try #require(try outbox.nextDue(now: Self.now))
        #expect(abs(leaseEnd - (Self.now + 30_000)) < 2_000, "a leased head is due again when its lease ends")
    }

    /// The stores' entry point for the hub's writes: rows written inside a transaction commit
    /// with it, or vanish with it.
    @Test(arguments: StoreKind.tested.filter { $0 != .memory })
    func rowsWrittenInAChangesTransactionCommitOrVanishWithIt(_ kind: StoreKind) throws {
        struct Abort: Error {}
        let harness = try Harness(kind)
        let entries = [Self.entry(Self.change("a", 1)), Self.entry(Self.change("a", 2))]
        switch kind {
        case .sqlite:
            let store = try SQLiteStore(path: (harness.outbox as! SQLiteWebhookOutbox).connection.path)
            #expect(throws: Abort.self) {
                try store.connection.transaction {
                    try SQLiteWebhookOutbox.insert(entries, into: store.connection)
                    throw Abort()
                }
            }
            #expect(try harness.outbox.counts().pending == 0)
            try store.connection.transaction { try SQLiteWebhookOutbox.insert(entries + entries, into: store.connection) }
        case .postgres:
            let connection = try PostgresConnection(url: (harness.outbox as! PostgresWebhookOutbox).connection.url)
            #expect(throws: Abort.self) {
                try connection.transaction {
                    try PostgresWebhookOutbox.insert(entries, on: connection)
                    throw Abort()
                }
            }
            #expect(try harness.outbox.counts().pending == 0)
            try connection.transaction { try PostgresWebhookOutbox.insert(entries + entries, on: connection) }
        case .memory:
            return
        }
        #expect(try harness.outbox.counts().pending == 2, "committed, each once")
    }

    /// Many claimers at once on one outbox: each event is handed to exactly one of them.
    @Test(arguments: StoreKind.shared)
    func concurrentClaimersNeverGetTheSameEvent(_ kind: StoreKind) throws {
        let harness = try Harness(kind)
        let t = Self.now - 1_000
        try harness.outbox.insert((0..<300).map { Self.entry(Self.change("d\($0 % 60)", Int64($0 / 60 + 1), at: t)) })
        // Each claimer uses only its own outbox (its own connection), on its own thread.
        nonisolated(unsafe) let outboxes = try (0..<4).map { _ in try harness.other() }
        let claimed = Claimed()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            let outbox = outboxes[worker]
            var idle = 0
            while idle < 20 {
                do {
                    let batch = try outbox.claim(endpoint: "crm", limit: 7, now: Self.now, owner: "n\(worker)", leaseMs: 60_000, coalesceMs: 0)
                    if batch.isEmpty { idle += 1; Thread.sleep(forTimeInterval: 0.005); continue }
                    idle = 0
                    for delivery in batch {
                        claimed.add(delivery.event.id)
                        try outbox.markDelivered(seq: delivery.seq)
                    }
                } catch {
                    claimed.add("error: \(error)")
                    return
                }
            }
        }
        let ids = claimed.all
        #expect(ids.count == 300)
        #expect(Set(ids).count == 300, "no event claimed twice")
        #expect(try harness.outbox.counts() == (pending: 0, dead: 0))
    }
}

private final class Claimed: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [String] = []
    func add(_ id: String) { lock.withLock { ids.append(id) } }
    var all: [String] { lock.withLock { ids } }
}
