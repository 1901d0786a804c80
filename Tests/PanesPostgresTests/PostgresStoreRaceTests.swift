import Foundation
import PanesCore
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

/// Two nodes (two stores, two connections) committing to the same channels at once.
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresStoreRaceTests {
    @Test func ofTwoNodesRacingOnAChannelExactlyOneCommitsEachRound() throws {
        let database = try TestDatabase()
        let nodes = [try PostgresStore(url: database.url), try PostgresStore(url: database.url)]
        let domain = PreferenceDomain(workspace: "acme", user: "ada")
        let document = DocumentID("doc_1")
        try nodes[0].apply([.createDocument(DocumentRecord(id: document, workspace: "acme", title: "t", createdAt: 0,
                                                           createdBy: "ada", modifiedAt: 0, revision: 0, length: 0),
                                            text: "")])
        let rounds = 60
        for round in 1...rounds {
            let version = Int64(round)
            let outcomes = ResultBox()
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for (index, node) in nodes.enumerated() {
                group.enter()
                Thread.detachNewThread { [node] in
                    defer { group.leave() }
                    start.wait()
                    var operation = TextOperation()
                    operation.retain(round - 1)
                    operation.insert("\(index)")
                    let writes: [StoreWrite] = [
                        .commit(Commit(id: CommitID(1), channel: .preferences(domain), base: version - 1, commands: [
                            .putPreference(domain, keyPath: "winner", value: .int(Int64(index)), version: version)])),
                        .commit(Commit(id: CommitID(2), channel: .document(document), base: version - 1, commands: [
                            .appendOperation(document, StoredOperation(revision: version, operation: operation,
                                                                       opId: "n\(index):\(round)",
                                                                       author: DocumentAuthor(scene: "s", user: "u", name: "n"),
                                                                       createdAt: 0), length: round)])),
                    ]
                    do {
                        let result = try node.apply(writes)
                        results(result, index, outcomes)
                    } catch {
                        outcomes.append("error \(error)")
                    }
                }
            }
            start.signal()
            start.signal()
            group.wait()
            let values = outcomes.values.compactMap { $0 }.sorted()
            // Either node may win each channel, but never both and never neither.
            #expect(values.filter { $0.hasSuffix("1 committed") }.count == 1, "round \(round): \(values)")
            #expect(values.filter { $0.hasSuffix("2 committed") }.count == 1, "round \(round): \(values)")
            #expect(values.filter { $0.hasSuffix("conflict") }.count == 2, "round \(round): \(values)")
        }
        let state = try nodes[1].loadState()
        #expect(state.preferences[domain]?.version == Int64(rounds))
        #expect(state.documents.first?.revision == Int64(rounds))
        #expect(try nodes[0].loadOperations(document, after: 0)?.count == rounds)
    }

    /// Two attempts of one keyed request through two nodes at once (a retry racing a held
    /// write): exactly one is applied, the other is left out, whatever the timing.
    @Test func ofTwoNodesRecordingOneKeyAtOnceExactlyOneApplies() throws {
        let database = try TestDatabase()
        let nodes = [try PostgresStore(url: database.url), try PostgresStore(url: database.url)]
        for round in 1...30 {
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            let errors = ResultBox()
            for (index, node) in nodes.enumerated() {
                group.enter()
                Thread.detachNewThread { [node] in
                    defer { group.leave() }
                    start.wait()
                    let slot = RequestKeySlot(owner: OwnerKey(workspace: "acme", user: "ada"), key: RequestKey("k\(round)"))
                    let document = DocumentRecord(id: DocumentID("doc_\(round)_\(index)"), workspace: "acme", title: "t",
                                                  createdAt: 0, createdBy: "ada", modifiedAt: 0, revision: 0, length: 0)
                    do {
                        _ = try node.apply([.persist([
                            .createDocument(document, text: ""),
                            .coordination(.recordKeyedRequest(RequestRecord(slot: slot, fingerprint: "f", result: .int(Int64(index)), at: 1),
                                                node: NodeID("node-\(index)"), report: CommitID(1))),
                        ])])
                    } catch {
                        errors.append("node \(index): \(error)")
                    }
                }
            }
            start.signal()
            start.signal()
            group.wait()
            #expect(errors.values.compactMap { $0 }.isEmpty)
            let made = try nodes[0].loadState().documents.filter { $0.id.rawValue.hasPrefix("doc_\(round)_") }
            #expect(made.count == 1, "round \(round): \(made.map(\.id))")
        }
    }

    private func results(_ outcomes: [CommitID: CommitOutcome], _ node: Int, _ box: ResultBox) {
        for (id, outcome) in outcomes {
            box.append("node \(node) commit \(id.rawValue) \(outcome == .committed ? "committed" : "conflict")")
        }
    }
}

/// A connection lost while COMMIT is under way: whether the batch is in is asked, not guessed.
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresLostCommitTests {
    static func session(_ id: String) -> SceneSession {
        SceneSession(id: SessionID(id), secretHash: .unmatchable, owner: OwnerKey(workspace: "acme", user: "ada"),
                     role: .window, configuration: "workspace", createdAt: 0, lastActiveAt: 0)
    }

    @Test func aBatchWhoseCommitReplyWasLostIsReportedAppliedNotRetried() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let document = DocumentRecord(id: DocumentID("doc_1"), workspace: "acme", title: "t", createdAt: 0,
                                      createdBy: "ada", modifiedAt: 0, revision: 0, length: 0)
        store.connection.commitFault = .replyLost
        // It committed: no error, so the caller never sends createDocument again (which would fail).
        try store.apply([.createDocument(document, text: "x"), .putSession(Self.session("s1"))])
        #expect(try store.loadState().documents == [document])
    }

    /// Faults at each step of a commit while the database cannot be asked: the store says it
    /// does not know (`CommitOutcomeUnknown`), and `resolve` tells once it can, the truth.
    @Test(arguments: [true, false])
    func aLostCommitThatCannotBeAskedAboutIsUnknownUntilResolved(committed: Bool) throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        store.connection.commitFault = committed ? .replyLost : .neverArrived
        store.connection.unreachableStatusAsks = 2
        let domain = PreferenceDomain(workspace: "acme", user: "ada")
        let commit = Commit(id: CommitID(7), channel: .preferences(domain), base: 0,
                            commands: [.putPreference(domain, keyPath: "k", value: 1, version: 1)])
        var unknown: CommitOutcomeUnknown?
        do {
            _ = try store.apply([.persist([.putSession(Self.session("s1"))]), .commit(commit)])
            Issue.record("a lost COMMIT that could not be asked about was reported applied")
        } catch let error as CommitOutcomeUnknown {
            unknown = error
        }
        let lost = try #require(unknown)
        #expect(lost.outcomes[CommitID(7)] == .committed, "what the commit comes to if it committed")
        #expect(throws: (any Error).self, "still out of reach") { try store.resolve(lost) }
        #expect(try store.resolve(lost) == committed)
        #expect(try store.loadState().sessions.count == (committed ? 1 : 0))
        #expect(try store.loadPreferences(domain)?.version == (committed ? 1 : nil))
    }

    /// A claim that found drops held for its session, in a transaction whose COMMIT went
    /// unanswered: the unknown outcome carries what it found, for when it turns out committed.
    @Test func aLostCommitCarriesTheHeldDropsItsClaimsFound() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let window = SessionID("ses_window"), empty = SessionID("ses_empty")
        let held = HeldDrop(session: window, drag: Identifier("drg_a"), event: ["drag": "drg_a"], keptUntil: 5_000)
        try store.apply([.coordination(.holdDrop(held, forgetBefore: 0))])
        store.connection.commitFault = .replyLost
        store.connection.unreachableStatusAsks = 1
        func claim(_ id: UInt64, _ session: SessionID) -> StoreWrite {
            let claim = SessionClaim(node: NodeID("c"), epoch: 1)
            return .commit(Commit(id: CommitID(id), channel: .coordination(.session(session)), base: 0,
                                  commands: [.coordination(.claimSession(session, claim))]))
        }
        var unknown: CommitOutcomeUnknown?
        do {
            _ = try store.apply([claim(1, empty), claim(2, window)])
            Issue.record("a lost COMMIT that could not be asked about was reported applied")
        } catch let error as CommitOutcomeUnknown {
            unknown = error
        }
        let lost = try #require(unknown)
        #expect(lost.heldDropsFound == [window])
        #expect(try store.resolve(lost) == true)
    }

    /// A prune of held drops skips the expired rows another transaction holds locked instead of
    /// waiting for them: it shares batches of users' writes (review D, F2). Without the skip the
    /// prune waits, and the lock timeout set here makes the batch fail.
    @Test func pruningHeldDropsSkipsRowsAnotherTransactionHoldsLocked() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let other = try PostgresConnection(url: database.url)
        func held(_ drag: String, _ session: String) -> HeldDrop {
            HeldDrop(session: SessionID(session), drag: Identifier(drag), event: ["drag": .string(drag)],
                     keptUntil: 1_000)
        }
        try store.apply([held("drg_locked", "ses_a"), held("drg_free", "ses_b")]
            .map { .coordination(.holdDrop($0, forgetBefore: 0)) })
        try other.execute("BEGIN")
        try other.execute("SELECT 1 FROM held_drops WHERE drag = 'drg_locked' FOR UPDATE")
        try store.connection.execute("SET lock_timeout = '5s'")
        try store.apply([.coordination(.pruneHeldDrops(before: 2_000)), .putSession(Self.session("s1"))])
        #expect(try store.loadState().sessions.map(\.id.rawValue) == ["s1"], "the batch committed")
        #expect(try store.loadHeldDrops(SessionID("ses_b"), now: 0).isEmpty, "the free row pruned")
        #expect(try store.loadHeldDrops(SessionID("ses_a"), now: 0).map(\.drag) == [Identifier("drg_locked")],
                "skipped")
        try other.execute("ROLLBACK")
        try store.apply([.coordination(.pruneHeldDrops(before: 2_000))])
        #expect(try store.loadHeldDrops(SessionID("ses_a"), now: 0).isEmpty, "pruned once free")
    }

    /// A transaction whose server process has not noticed its client is gone is still "in
    /// progress": the process is ended, which settles it (not committed), instead of waiting.
    @Test func aTransactionStillInProgressIsEndedAndReportedNotCommitted() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let other = try PostgresConnection(url: database.url)
        try other.execute("BEGIN")
        let transaction = try #require(try other.integer("SELECT txid_current()"))
        try other.execute("INSERT INTO nodes (id, lease_until) VALUES ('n', 0)")
        #expect(try store.connection.transactionStatus(transaction, backend: other.backendPID) == false)
        #expect(try store.connection.integer("SELECT count(*)::bigint FROM nodes") == 0)
    }

    /// What tells is the transaction's own marker, not its id: after a crash PostgreSQL hands out
    /// again the ids of transactions that never reached its log, so the id of a lost one can
    /// name another that committed.
    @Test func theMarkerNotTheTransactionIDTellsWhetherALostTransactionCommitted() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        let other = try PostgresConnection(url: database.url)
        try other.execute("BEGIN")
        let transaction = try #require(try other.integer("SELECT txid_current()"))
        try other.execute("COMMIT")
        // That id committed, but not with this marker: another transaction's commit.
        #expect(try store.connection.transactionStatus(transaction, backend: other.backendPID, marker: "ours") == false)
        try other.execute("INSERT INTO commit_markers (marker, created_at) VALUES ('ours', 0)")
        #expect(try store.connection.transactionStatus(transaction, backend: other.backendPID, marker: "ours") == true)
    }

    @Test func aBatchWhoseCommitNeverArrivedThrowsAndLeavesNothing() throws {
        let database = try TestDatabase()
        let store = try PostgresStore(url: database.url)
        store.connection.commitFault = .neverArrived
        #expect(throws: PostgresError.self) { try store.apply([.putSession(Self.session("s1"))]) }
        #expect(try store.loadState().sessions.isEmpty)
        try store.apply([.putSession(Self.session("s1"))])
        #expect(try store.loadState().sessions.map(\.id) == [SessionID("s1")])
    }
}
