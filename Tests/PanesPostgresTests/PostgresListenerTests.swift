import Foundation
import PanesCore
import PanesJSON
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresListenerTests {
    @Test func aCommitOnAnotherNodeArrivesAsNotices() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let listener = try PostgresListener(url: database.url)
        let notices = started(listener)
        defer { listener.stop() }

        let domain = PreferenceDomain(workspace: "acme", user: "ada")
        let outcome = try store.apply([
            .commit(Commit(id: CommitID(1), channel: .preferences(domain), base: 0,
                           commands: [.putPreference(domain, keyPath: "theme", value: "dark", version: 1)])),
            .persist([.putSession(SceneSession(id: SessionID("s1"), secretHash: .unmatchable, owner: OwnerKey(workspace: "acme", user: "ada"),
                                               role: .window, configuration: "workspace", createdAt: 0, lastActiveAt: 0))]),
        ])
        #expect(outcome == [CommitID(1): .committed])
        let cursor = try store.loadState().recordCursor
        #expect(notices.wait { $0 == [.nodesAlive([], readBegan: 0), .resubscribed, .channel(.preferences(domain), version: 1), .records(cursor: cursor)] },
                "listening starts with resubscribed, then the commit's notices")
    }

    /// PostgreSQL delivers a NOTIFY to the sender's LISTEN too: a node's listener drops what its
    /// own store sent, unread, and still delivers every other node's notices.
    @Test func aNodesOwnNoticesAreDroppedAndAnotherNodesDelivered() throws {
        let database = try TestDatabase()
        let own = try PostgresStore(url: database.url)
        let other = try PostgresStore(url: database.url)
        #expect(own.noticeOrigin != other.noticeOrigin)
        let listener = try PostgresListener(url: database.url, ownOrigin: own.noticeOrigin)
        let notices = started(listener)
        defer { listener.stop() }

        func commit(_ store: PostgresStore, _ domain: PreferenceDomain) throws {
            let outcome = try store.apply([.commit(Commit(id: CommitID(1), channel: .preferences(domain), base: 0,
                                                          commands: [.putPreference(domain, keyPath: "theme", value: "dark", version: 1)]))])
            #expect(outcome == [CommitID(1): .committed])
        }
        let mine = PreferenceDomain(workspace: "acme", user: "ada")
        let theirs = PreferenceDomain(workspace: "acme", user: "bob")
        try commit(own, mine)
        try own.apply([.signal(NodeSignal(from: NodeID("n1"), to: nil, kind: .scenesWanted))])
        try commit(other, theirs)
        // Delivered in commit order: once the other store's notice is in, the own ones were read.
        #expect(notices.wait { $0.contains(.channel(.preferences(theirs), version: 1)) }, "\(notices)")
        #expect(notices.wait { $0 == [.nodesAlive([], readBegan: 0), .resubscribed, .channel(.preferences(theirs), version: 1)] },
                "only the other store's notice is delivered: \(notices)")
        #expect(listener.counts == PostgresListener.Counts(read: 1, own: 2))
    }

    /// A document's commit says its revision, length and last edit: nodes that do not hold the
    /// document open keep their lists right from the notice alone.
    @Test func aDocumentCommitNotifiesItsLengthAndLastEdit() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let record = DocumentRecord(id: DocumentID("doc_1"), workspace: "acme", title: "t", createdAt: 0,
                                    createdBy: "ada", modifiedAt: 0)
        try store.apply([.persist([.createDocument(record, text: "ab")])])
        let listener = try PostgresListener(url: database.url)
        let notices = started(listener)
        defer { listener.stop() }
        let author = DocumentAuthor(scene: "scn_1", user: "ada", name: "Ada")
        let first = StoredOperation(revision: 1, operation: TextOperation([.retain(2), .insert("c")]), opId: "o1",
                                    author: author, createdAt: 1_000)
        let second = StoredOperation(revision: 2, operation: TextOperation([.retain(3), .insert("de")]), opId: "o2",
                                     author: author, createdAt: 2_000)
        let outcome = try store.apply([.commit(Commit(id: CommitID(1), channel: .document(record.id), base: 0, commands: [
            .appendOperation(record.id, first, length: 3), .appendOperation(record.id, second, length: 5),
        ]))])
        #expect(outcome == [CommitID(1): .committed])
        #expect(notices.wait { $0.contains(.documentEdited(record.id, revision: 2, length: 5, modifiedAt: 2_000)) },
                "\(notices)")
    }

    /// Once listening, before `resubscribed`, the listener says which nodes' leases run: a node
    /// that registers after that read asks every node (`scenesWanted`) after registering, which
    /// this connection hears; so the node knows every other node alive, and one alone builds
    /// no lists for nobody (`Hub+Peers.swift`). Each reconnection reads them again.
    @Test func listeningStartsWithTheNodesAliveThenResubscribed() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let (a, b) = (NodeID("node-a"), NodeID("node-b"))
        _ = try store.register(node: a, leaseMs: 60_000)
        let listener = try PostgresListener(url: database.url)
        let notices = started(listener)
        defer { listener.stop() }
        #expect(notices.wait { $0 == [.nodesAlive([a], readBegan: 0), .resubscribed] }, "\(notices)")

        let other = try PostgresStore(url: database.url)
        _ = try other.register(node: b, leaseMs: 60_000)
        let admin = try database.connect()
        try admin.query("SELECT pg_terminate_backend($1::int)", [.int(Int64(listener.backendPID))])
        #expect(notices.wait { $0 == [.nodesAlive([a], readBegan: 0), .resubscribed, .nodesAlive([a, b], readBegan: 0), .resubscribed] },
                "\(notices)")
        // Each read is stamped when it began, so the hub keeps the newer one whatever the order.
        let began = notices.nodesAliveReadsBegan
        #expect(began.count == 2 && began[0] > 0 && began[1] > began[0], "\(began)")
    }

    @Test func aTerminatedListenConnectionIsReplacedAndSaysResubscribed() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let listener = try PostgresListener(url: database.url)
        let notices = started(listener)
        defer { listener.stop() }
        let first = listener.backendPID

        let admin = try database.connect()
        try admin.query("SELECT pg_terminate_backend($1::int)", [.int(Int64(first))])
        #expect(notices.wait { $0.filter { $0 == .resubscribed }.count == 2 })
        #expect(listener.backendPID != first)

        // And it listens again.
        try store.apply([.createDocument(DocumentRecord(id: DocumentID("doc_1"), workspace: "acme", title: "t",
                                                        createdAt: 0, createdBy: "ada", modifiedAt: 0, revision: 0,
                                                        length: 0), text: "")])
        #expect(notices.wait { $0.contains { if case .records = $0 { true } else { false } } })
    }

    @Test func signalsArriveWithTheirTransactionAndLargeOnesAreFetched() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let listener = try PostgresListener(url: database.url)
        let notices = started(listener)
        defer { listener.stop() }

        let small = NodeSignal(from: NodeID("a"), to: NodeID("b"), kind: .probe(SessionID("s1")))
        let large = NodeSignal(from: NodeID("a"), to: nil, kind: .activate(
            SessionID("s1"), activity: ["title": .string(String(repeating: "🪟", count: 5_000))], requestedBy: "ada"))
        _ = try store.apply([.signal(small), .signal(large)])
        #expect(notices.wait { $0 == [.nodesAlive([], readBegan: 0), .resubscribed, .signal(small), .signal(large)] })
    }

    /// A node's live scenes of a user and its people in a document are told again, whole, to any
    /// node that asks once registered (`NodeSignal.isRetoldWhenAsked`): while no other node's
    /// lease runs they are neither stored nor notified, other signals are; once one runs, they
    /// are again, and not after its lease has ended.
    @Test func signalsToldAgainWhenAskedAreWrittenOnlyWhileAnotherNodesLeaseRuns() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let listener = try PostgresListener(url: database.url)
        let notices = started(listener)
        defer { listener.stop() }
        let (a, b) = (NodeID("node-a"), NodeID("node-b"))
        _ = try store.register(node: a, leaseMs: 60_000)

        // Over the inline limit: stored in node_signals when written.
        let entry: JSONValue = ["session": .string(String(repeating: "s", count: 40)), "scene": .null,
                                "state": "background", "traits": .null, "epoch": 1]
        let scenes = NodeSignal(from: a, to: nil, kind: .scenes(
            ["workspace": "acme", "user": "ada", "scenes": .array(Array(repeating: entry, count: 100))]))
        let people = NodeSignal(from: a, to: nil, kind: .people(["document": "doc_1", "people": []]))
        let toB = NodeSignal(from: a, to: b, kind: .scenes(["workspace": "acme", "user": "ada", "scenes": []]))
        let probe = NodeSignal(from: a, to: b, kind: .probe(SessionID("s1")))
        let reader = try PostgresConnection(url: database.url)
        func stored() throws -> Int64 { try reader.integer("SELECT count(*)::bigint FROM node_signals") ?? -1 }

        _ = try store.apply([.signal(scenes), .signal(people), .signal(toB), .signal(probe)])
        #expect(notices.wait { $0 == [.nodesAlive([], readBegan: 0), .resubscribed, .signal(toB), .signal(probe)] }, "\(notices)")
        #expect(try stored() == 0)

        let other = try PostgresStore(url: database.url)
        _ = try other.register(node: b, leaseMs: 60_000)
        _ = try store.apply([.signal(scenes), .signal(people)])
        #expect(notices.wait { $0 == [.nodesAlive([], readBegan: 0), .resubscribed, .signal(toB), .signal(probe), .signal(scenes), .signal(people)] },
                "\(notices)")
        #expect(try stored() == 1)

        // b's connection ends (its liveness lock with it) and a's check ends b's lease.
        other.close()
        #expect(notices.wait { _ in (try? store.checkNodes(node: a, leaseMs: 60_000)) == [b] })
        _ = try store.apply([.signal(scenes), .signal(people), .signal(probe)])
        #expect(notices.wait { $0 == [.nodesAlive([], readBegan: 0), .resubscribed, .signal(toB), .signal(probe), .signal(scenes), .signal(people), .signal(probe)] },
                "\(notices)")
        #expect(try stored() == 1)
    }

    /// Reading a large signal's payload is a query; a notification the server sends before that
    /// query ends is queued by libpq with its answer, and nothing is left on the socket to wake
    /// the listener's `poll`. It is delivered then, not when some later notification comes (the
    /// fan-out bench's first change after 10,000 connects waited 20 s for the next one).
    @Test func aNoticeThatArrivesDuringALargeSignalsReadIsNotLeftWaiting() throws {
        let database = try TestDatabase()
        _ = try PostgresStore(url: database.url)  // the schema
        let listener = try PostgresListener(url: database.url)
        let notices = started(listener)
        defer { listener.stop() }

        let large = NodeSignal(from: NodeID("a"), to: nil, kind: .activate(
            SessionID("s1"), activity: ["title": .string(String(repeating: "🪟", count: 5_000))], requestedBy: "ada"))
        let writer = try PostgresConnection(url: database.url)
        let id = try writer.integer("INSERT INTO node_signals (payload, created_at) VALUES ($1, 0) RETURNING id",
                                    [.text(JSONCodec.encodeString(large.json))]) ?? 0
        // The listener's read of it waits behind this lock, while the next notice is sent.
        let blocker = try PostgresConnection(url: database.url)
        try blocker.execute("BEGIN")
        try blocker.execute("LOCK TABLE node_signals IN ACCESS EXCLUSIVE MODE")
        for payload in ChangeNoticePayload.encode(items: [.storedSignal(id)]) {
            try writer.execute("NOTIFY panes, '\(payload)'")
        }
        let waiting = "SELECT count(*) FROM pg_locks WHERE pid = \(listener.backendPID) AND NOT granted"
        #expect(notices.wait { _ in (try? writer.integer(waiting)).flatMap { $0 } ?? 0 > 0 }, "the listener reads, and waits")
        let domain = PreferenceDomain(workspace: "acme", user: "ada")
        for payload in ChangeNoticePayload.encode([.channel(.preferences(domain), version: 1)]) {
            try writer.execute("NOTIFY panes, '\(payload)'")
        }
        try blocker.execute("COMMIT")
        #expect(notices.wait(timeout: 5) { $0 == [.nodesAlive([], readBegan: 0), .resubscribed, .signal(large), .channel(.preferences(domain), version: 1)] },
                "both delivered, the notice without waiting for another notification")
    }

    /// A stored signal whose row is gone (pruned after `signalRetentionMs`: the listener read
    /// it far too late) is a notification lost: the listener says `resubscribed`, so the node
    /// looks at everything again (and asks the other nodes), as after any loss. (Skipped
    /// silently, a missed middle part of an answer read as a whole answer.)
    @Test func aStoredSignalWhoseRowIsGoneSaysResubscribed() throws {
        let database = try TestDatabase()
        _ = try PostgresStore(url: database.url)  // the schema
        let listener = try PostgresListener(url: database.url)
        let notices = started(listener)
        defer { listener.stop() }
        #expect(notices.wait { $0 == [.nodesAlive([], readBegan: 0), .resubscribed] })

        let large = NodeSignal(from: NodeID("a"), to: nil, kind: .activate(
            SessionID("s1"), activity: ["title": .string(String(repeating: "x", count: 5_000))], requestedBy: "ada"))
        let writer = try PostgresConnection(url: database.url)
        let id = try writer.integer("INSERT INTO node_signals (payload, created_at) VALUES ($1, 0) RETURNING id",
                                    [.text(JSONCodec.encodeString(large.json))]) ?? 0
        try writer.execute("DELETE FROM node_signals WHERE id = \(id)")
        let domain = PreferenceDomain(workspace: "acme", user: "ada")
        for payload in ChangeNoticePayload.encode(items: [.storedSignal(id), .notice(.channel(.preferences(domain), version: 1))]) {
            try writer.execute("NOTIFY panes, '\(payload)'")
        }
        #expect(notices.wait(timeout: 5) { $0 == [.nodesAlive([], readBegan: 0), .resubscribed, .resubscribed, .channel(.preferences(domain), version: 1)] },
                "\(notices)")
    }

    @Test func stopIsPromptWhileWaiting() throws {
        let database = try TestDatabase()
        let listener = try PostgresListener(url: database.url)
        listener.start { _ in }
        Thread.sleep(forTimeInterval: 0.2)
        let started = Date()
        listener.stop()
        #expect(Date().timeIntervalSince(started) < 1)
    }
}

/// Notices collected from the listener's thread.
final class NoticeBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var notices: [ChangeNotice] = []
    /// When each `nodesAlive` read began; the notices kept carry 0 instead, to compare whole.
    private var readsBegan: [Millis] = []

    func append(_ notice: ChangeNotice) {
        condition.lock()
        if case .nodesAlive(let nodes, let readBegan) = notice {
            readsBegan.append(readBegan)
            notices.append(.nodesAlive(nodes, readBegan: 0))
        } else {
            notices.append(notice)
        }
        condition.broadcast()
        condition.unlock()
    }

    var nodesAliveReadsBegan: [Millis] {
        condition.lock()
        defer { condition.unlock() }
        return readsBegan
    }

    /// Waits until `test` holds for the notices so far (polling, as some conditions are outside).
    func wait(timeout: Double = 10, _ test: ([ChangeNotice]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !test(notices) {
            if Date() > deadline { return false }
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.05)))
        }
        return true
    }
}

/// Starts `listener` collecting what it hears into the box returned, and waits until its
/// connection is up (it has a backend), so that nothing a test commits next is missed.
private func started(_ listener: PostgresListener) -> NoticeBox {
    let notices = NoticeBox()
    listener.start { notices.append($0) }
    #expect(notices.wait { _ in listener.backendPID != 0 })
    return notices
}
