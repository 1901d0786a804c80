import Foundation
import Logging
import PanesCore
@testable import PanesServer
import Synchronization
import Testing

/// The store thread: group commit, retries, and a store that cannot commit.
@Suite struct StoreWorkerTests {
    /// A store whose next `failures` applies throw, counting what it commits.
    final class FlakyStore: WrappedMemoryStore, @unchecked Sendable {
        let inner = MemoryStore()
        var failures: Int
        var applied: [[StoreWrite]] = []
        /// Signalled at every checkpoint, with what had been applied by then.
        let checkpoints = Mutex<[Int]>([])
        let checkpointed = DispatchSemaphore(value: 0)

        init(failures: Int) { self.failures = failures }

        func checkpoint() throws {
            let count = applied.count
            checkpoints.withLock { $0.append(count) }
            checkpointed.signal()
        }

        func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
            if failures > 0 {
                failures -= 1
                throw MemoryStoreError.injectedFailure
            }
            applied.append(writes)
            return try inner.apply(writes)
        }
    }

    /// Records what the worker reports.
    final class Reports: Sendable {
        let durable = Mutex<[UInt64]>([])
        let outcomes = Mutex<[(CommitID, CommitOutcome)]>([])
        let failures = Mutex<[String]>([])
        let heldDropsFound = Mutex<[SessionID]>([])
        /// Reports made at all (a transaction of quiet persists makes none).
        let reported = Mutex(0)
    }

    func worker(_ store: FlakyStore, _ reports: Reports, quietWriteDelayMs: Int = 0) -> StoreWorker {
        StoreWorker(store: store, logger: Logger(label: "test"), quietWriteDelayMs: quietWriteDelayMs,
                    onApplied: { report in
                        reports.reported.withLock { $0 += 1 }
                        if let durable = report.durable { reports.durable.withLock { $0.append(durable) } }
                        reports.outcomes.withLock { $0 += report.outcomes }
                    },
                    onFailure: { reason in reports.failures.withLock { $0.append(reason) } },
                    onLoaded: { _ in })
    }

    static func session(_ number: Int) -> StoreCommand {
        .putSession(SceneSession(id: SessionID("s\(number)"), secretHash: .unmatchable, owner: OwnerKey(workspace: "w", user: "u"),
                                 role: .window, configuration: "workspace", createdAt: 0, lastActiveAt: 0))
    }

    /// What a transaction reports: each commit's id and each keyed persist's report, in the
    /// order written; a quiet persist (a resume's liveness), a keyed record without a report
    /// and a signal add nothing.
    @Test func aTransactionReportsItsCommitsAndKeyedPersistsInOrder() {
        let record = RequestRecord(slot: RequestKeySlot(owner: OwnerKey(workspace: "w", user: "u"), key: RequestKey("k")),
                                   fingerprint: "f", result: [:], at: 0)
        let keyed = { (report: UInt64?) -> StoreCommand in
            .coordination(.recordKeyedRequest(record, node: NodeID("n"), report: report.map(CommitID.init)))
        }
        let writes: [StoreWrite] = [
            .persist([Self.session(1)]), Self.set(4),
            .persist([Self.session(2), keyed(7), keyed(nil), keyed(5)]),
            .signal(NodeSignal(from: NodeID("n"), to: nil, kind: .scenesWanted)),
            .persist([]), Self.set(2), .persist([keyed(9)]),
        ]
        #expect(StoreWorker.reported(writes) == [CommitID(4), CommitID(7), CommitID(5), CommitID(2), CommitID(9)])
        #expect(StoreWorker.reported([.persist([Self.session(3)])]).isEmpty && StoreWorker.reported([]).isEmpty)
    }

    @Test func batchesSubmittedTogetherAreCommittedTogetherAndReportedInOrder() {
        let store = FlakyStore(failures: 0)
        let reports = Reports()
        let worker = worker(store, reports)
        // Submitted before the thread starts, so all three are pending at its first look.
        for sequence in 1...3 { worker.submit(.persist([Self.session(Int(sequence))]), sequence: UInt64(sequence)) }
        worker.start()
        worker.stop()
        #expect(store.applied.count == 1, "one transaction for all three batches")
        #expect(store.applied.first?.count == 3)
        #expect(reports.durable.withLock { $0 } == [3])
    }

    /// Persists nobody waits for (a resumed window's `liveSince`) wait for company: written a
    /// moment apart, they still share one transaction, and nothing is reported for it.
    @Test func quietPersistsShareOneTransactionThatIsNotReported() {
        let store = FlakyStore(failures: 0)
        let reports = Reports()
        let worker = worker(store, reports, quietWriteDelayMs: 1_000)
        worker.start()
        for number in 1...3 {
            worker.submit(.persist([Self.session(number)]), sequence: nil)
            Thread.sleep(forTimeInterval: 0.05)  // each alone, were it not for the wait
        }
        worker.stop()  // ends the wait: a stopping worker commits what it holds
        #expect(store.applied.count == 1, "one transaction for the three")
        #expect(store.applied.first?.count == 3)
        #expect(reports.reported.withLock { $0 } == 0)
    }

    /// A write something waits for ends a quiet batch's wait at once, and shares its commit.
    @Test func aWriteSomethingWaitsForEndsTheWaitAndCommitsWithTheQuietOnes() {
        let store = FlakyStore(failures: 0)
        let reports = Reports()
        let worker = worker(store, reports, quietWriteDelayMs: 60_000)
        worker.start()
        worker.submit(.persist([Self.session(1)]), sequence: nil)
        Thread.sleep(forTimeInterval: 0.05)
        worker.submit(.persist([Self.session(2)]), sequence: 1)
        // Well before the minute is up, or only the stop below could have ended the wait.
        let deadline = Date(timeIntervalSinceNow: 20)
        while reports.durable.withLock({ $0 }).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(reports.durable.withLock { $0 } == [1])
        worker.stop()
        #expect(store.applied.count == 1)
        #expect(store.applied.first == [.persist([Self.session(1)]), .persist([Self.session(2)])])
    }

    /// Quiet persists submitted with `submitQuietly` stay on the submitting thread, one lock for
    /// a loop turn's many: the store thread has none of them until `handOver`, then commits
    /// them together, in order.
    @Test func quietPersistsWaitForTheHandOverAndAreCommittedTogetherInOrder() {
        let store = FlakyStore(failures: 0)
        let reports = Reports()
        let worker = worker(store, reports)
        worker.start()
        for number in 1...3 { worker.submitQuietly(.persist([Self.session(number)])) }
        Thread.sleep(forTimeInterval: 0.05)  // the store thread, with no delay, would have committed each
        #expect(worker.statistics.commits == 0)
        #expect(worker.statistics.pending == 3)
        worker.handOver()
        let deadline = Date(timeIntervalSinceNow: 20)
        while worker.statistics.commits == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        worker.stop()
        #expect(store.applied == [[.persist([Self.session(1)]), .persist([Self.session(2)]), .persist([Self.session(3)])]])
        #expect(reports.reported.withLock { $0 } == 0)
    }

    /// Anything else submitted takes the kept quiet persists along first: the order is the
    /// submitting thread's (a resume's write, then a preference's, acknowledged once durable).
    @Test func aWriteSubmittedAfterKeptQuietPersistsCommitsBehindThem() {
        let store = FlakyStore(failures: 0)
        let reports = Reports()
        let worker = worker(store, reports)
        worker.submitQuietly(.persist([Self.session(1)]))
        worker.submit(.persist([Self.session(2)]), sequence: 1)
        worker.submitQuietly(.persist([Self.session(3)]))
        worker.start()
        let deadline = Date(timeIntervalSinceNow: 20)
        while reports.durable.withLock({ $0 }).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(reports.durable.withLock { $0 } == [1])
        worker.stop()  // hands the last one over, and commits it before the thread ends
        #expect(store.applied.flatMap { $0 } == [.persist([Self.session(1)]), .persist([Self.session(2)]),
                                                 .persist([Self.session(3)])])
    }

    /// A persist submitted with no sequence is still not quiet when it records a keyed request
    /// whose answer waits for its outcome (`keyedReport`): it does not wait for company.
    @Test func aKeyedRecordsPersistDoesNotWaitForCompany() {
        let store = FlakyStore(failures: 0)
        let reports = Reports()
        let worker = worker(store, reports, quietWriteDelayMs: 60_000)
        worker.start()
        let record = RequestRecord(slot: RequestKeySlot(owner: OwnerKey(workspace: "w", user: "u"), key: RequestKey("k")),
                                   fingerprint: "createDocument:1:00", result: ["ok": true], at: 1)
        worker.submit(.persist([Self.session(1), .coordination(.recordKeyedRequest(record, node: NodeID("n"),
                                                                                   report: CommitID(7)))]),
                      sequence: nil)
        // Well before the minute is up, or only the stop below could have ended the wait.
        let deadline = Date(timeIntervalSinceNow: 20)
        while reports.outcomes.withLock({ $0.isEmpty }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(reports.outcomes.withLock { $0.map(\.0.rawValue) } == [7])
        worker.stop()
    }

    @Test func commitsShareTheTransactionAndEachGetsItsOutcomeInOrder() throws {
        let store = FlakyStore(failures: 0)
        let reports = Reports()
        let worker = worker(store, reports)
        let domain = PreferenceDomain(workspace: "w", user: "u")
        func set(_ id: UInt64, base: Int64) -> StoreWrite {
            .commit(Commit(id: CommitID(id), channel: .preferences(domain), base: base,
                           commands: [.putPreference(domain, keyPath: "k", value: .int(Int64(id)), version: base + 1)]))
        }
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        worker.submit(set(1, base: 0), sequence: nil)
        // Made on version 0 too: another writer got there first, so it is refused, not applied.
        worker.submit(set(2, base: 0), sequence: nil)
        worker.submit(set(3, base: 1), sequence: nil)
        worker.start()
        worker.stop()
        #expect(store.applied.count == 1)
        #expect(reports.durable.withLock { $0 } == [1])
        #expect(reports.outcomes.withLock { $0.map(\.0.rawValue) } == [1, 2, 3])
        #expect(reports.outcomes.withLock { $0.map(\.1) } == [.committed, .conflict, .committed])
        #expect(try store.inner.loadPreferences(domain)?.values["k"]?.value == 3)
    }

    /// A document commit that conflicts on a shared store is resolved inside its transaction:
    /// its retry takes its place and is the one reported; the conflict itself is not (the
    /// resolver delivered it).
    @Test(arguments: [true, false])
    func aConflictingDocumentCommitIsReplacedByItsRetryInTheSameTransaction(retries: Bool) throws {
        let store = MemoryStore()
        let id = DocumentID("doc_1")
        let author = DocumentAuthor(scene: "scn_1", user: "ada", name: "Ada")
        func operation(_ revision: Int64, _ text: String, after length: Int) -> StoredOperation {
            var operation = TextOperation()
            operation.retain(length)
            operation.insert(text)
            return StoredOperation(revision: revision, operation: operation, opId: "op\(revision)\(text)", author: author,
                                   createdAt: 1)
        }
        try store.apply([.createDocument(DocumentRecord(id: id, workspace: "w", title: "t", createdAt: 1, createdBy: "ada",
                                                        modifiedAt: 1, revision: 0, length: 0), text: "")])
        // Another node committed revision 1.
        let theirs = operation(1, "a", after: 0)
        try store.apply([.appendOperation(id, theirs, length: 1)])
        let asked = Mutex<[(CommitID, [StoredOperation])]>([])
        let reports = Reports()
        let retry = Commit(id: CommitID(2), channel: .document(id), base: 1,
                           commands: [.appendOperation(id, operation(2, "b", after: 1), length: 2)])
        let worker = StoreWorker(store: store, logger: Logger(label: "test"), policy: .sharedStore,
                                 onApplied: { report in reports.outcomes.withLock { $0 += report.outcomes } },
                                 onFailure: { _ in }, onLoaded: { _ in },
                                 onConflict: { commit, operations in
                                     asked.withLock { $0.append((commit.id, operations)) }
                                     return retries ? retry : nil
                                 })
        let domain = PreferenceDomain(workspace: "w", user: "ada")
        worker.submit(.commit(Commit(id: CommitID(1), channel: .document(id), base: 0,
                                     commands: [.appendOperation(id, operation(1, "b", after: 0), length: 1)])),
                      sequence: nil)
        worker.submit(.commit(Commit(id: CommitID(3), channel: .preferences(domain), base: 0,
                                     commands: [.putPreference(domain, keyPath: "k", value: 1, version: 1)])), sequence: nil)
        worker.start()
        worker.stop()
        #expect(asked.withLock { $0.map(\.0) } == [CommitID(1)])
        #expect(asked.withLock { $0.map(\.1) } == [[theirs]])
        let reported = reports.outcomes.withLock { $0 }
        #expect(reported.map(\.0) == (retries ? [CommitID(2), CommitID(3)] : [CommitID(3)]))
        #expect(reported.allSatisfy { $0.1 == .committed })
        #expect(try store.loadOperations(id, after: 0)?.map(\.opId) == (retries ? ["op1a", "op2b"] : ["op1a"]))
    }

    @Test func aCommitThatFailsBrieflyIsRetriedAndThenReportedDurable() {
        let store = FlakyStore(failures: 2)
        let reports = Reports()
        let worker = worker(store, reports)
        worker.start()
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        worker.stop()
        #expect(reports.durable.withLock { $0 } == [1])
        #expect(reports.failures.withLock { $0 }.isEmpty)
    }

    @Test func aStoreThatCannotCommitIsReportedAndNothingIsAcknowledged() {
        let store = FlakyStore(failures: .max)
        let reports = Reports()
        let worker = worker(store, reports)
        worker.start()
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        worker.stop()
        #expect(reports.durable.withLock { $0 }.isEmpty, "never durable, so never acknowledged")
        #expect(reports.failures.withLock { $0 }.count == 1)
        #expect(store.applied.isEmpty)
    }

    @Test func theStoreIsCheckpointedEveryIntervalAndOnceMoreWhenTheThreadStops() {
        let store = FlakyStore(failures: 0)
        let worker = StoreWorker(store: store, logger: Logger(label: "test"), checkpointIntervalMs: 1_000,
                                 onApplied: { _ in }, onFailure: { _ in }, onLoaded: { _ in })
        worker.start()
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        // With nothing else to do, the thread wakes for the checkpoint on its own.
        #expect(store.checkpointed.wait(timeout: .now() + 30) == .success)
        worker.submit(.persist([Self.session(2)]), sequence: 2)
        worker.stop()
        let checkpoints = store.checkpoints.withLock { $0 }
        #expect(checkpoints.first == 1, "the periodic checkpoint came after the first commit")
        #expect(checkpoints.last == 2, "the last checkpoint came after the last commit, at stop")
    }

    // MARK: A shared store that goes away (policy .stall)

    /// A store that fails while `down` is set, from any thread.
    final class OutageStore: WrappedMemoryStore, @unchecked Sendable {
        let inner = MemoryStore()
        let down = Mutex(true)
        let attempts = Mutex(0)

        func loadDocument(_ id: DocumentID, retention: Int) throws -> StoredDocument? {
            if down.withLock({ $0 }) { throw MemoryStoreError.injectedFailure }
            return try inner.loadDocument(id, retention: retention)
        }
        func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
            attempts.withLock { $0 += 1 }
            if down.withLock({ $0 }) { throw MemoryStoreError.injectedFailure }
            return try inner.apply(writes)
        }
    }

    /// A worker as a cluster node has one: it holds writes through an outage (short backoffs),
    /// and reports into `reports`.
    static func stallingWorker(_ store: any Store, _ reports: Reports,
                               onLoaded: @escaping @Sendable (LoadResult) -> Void = { _ in }, fencing: NodeID? = nil,
                               onRevoked: @escaping @Sendable (NodeID) -> Void = { _ in },
                               onRejoined: @escaping @Sendable (StoredState) -> Void = { _ in }) -> StoreWorker {
        StoreWorker(store: store, logger: Logger(label: "test"),
                    policy: .stall(minBackoffMs: 10, maxBackoffMs: 40, shutdownGiveUpMs: 1_000),
                    onApplied: { report in
                        if let durable = report.durable { reports.durable.withLock { $0.append(durable) } }
                        reports.outcomes.withLock { $0 += report.outcomes }
                    },
                    onFailure: { reason in reports.failures.withLock { $0.append(reason) } },
                    onLoaded: onLoaded, fencing: fencing, leaseMs: 60_000, onRevoked: onRevoked, onRejoined: onRejoined)
    }

    @Test func whileASharedStoreIsDownCommitsFailPersistsWaitAndNothingIsAcknowledgedUntilItIsBack() throws {
        let store = OutageStore()
        let reports = Reports()
        let loads = Mutex<[LoadResult]>([])
        let worker = Self.stallingWorker(store, reports, onLoaded: { result in loads.withLock { $0.append(result) } })
        let domain = PreferenceDomain(workspace: "w", user: "u")
        func set(_ id: UInt64) -> StoreWrite {
            .commit(Commit(id: CommitID(id), channel: .preferences(domain), base: 0,
                           commands: [.putPreference(domain, keyPath: "k", value: .int(Int64(id)), version: 1)]))
        }
        worker.start()
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        worker.submit(set(1), sequence: nil)
        // Wait until the first transaction failed and the worker holds its persist.
        let deadline = Date(timeIntervalSinceNow: 10)
        while worker.stalledWrites == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        worker.submit(.persist([Self.session(2)]), sequence: 2)
        worker.submit(set(2), sequence: nil)
        worker.load(.document(DocumentID("doc_1"), retention: 10))
        while reports.outcomes.withLock({ $0.count }) < 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        // Several retries go by, failing: nothing acknowledged, no fatal failure.
        while store.attempts.withLock({ $0 }) < 5 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(reports.durable.withLock { $0 }.isEmpty)
        #expect(reports.failures.withLock { $0 }.isEmpty, "a shared store's outage is not fatal")
        #expect(reports.outcomes.withLock { $0.map(\.0.rawValue) } == [1, 2])
        #expect(reports.outcomes.withLock { $0.allSatisfy { if case .failed = $0.1 { true } else { false } } })
        #expect(loads.withLock { $0.count } == 1)
        if case .document(_, nil, let failure)? = loads.withLock({ $0.first }) {
            #expect(failure != nil, "a load behind held writes fails rather than reading without them")
        } else {
            Issue.record("the load was not answered with a failure")
        }

        store.down.withLock { $0 = false }
        while reports.durable.withLock({ $0 }).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(reports.durable.withLock { $0 } == [2], "both held persists committed at once")
        #expect(try store.inner.loadState().sessions.map(\.id.rawValue) == ["s1", "s2"])
        #expect(try store.inner.loadPreferences(domain) == nil, "failed commits were never applied")
        worker.stop()
    }

    // MARK: A node whose lease has ended (fencing)

    /// Once the node's lease has ended, its next transaction is refused by the store: nothing
    /// of it is applied or acknowledged, the runtime is told once, and everything after it is
    /// refused without touching the store, until the worker fences as a new identity and
    /// reloads the state for it.
    @Test func aWriteRefusedByTheFenceIsDroppedReportedOnceAndTheWorkerRejoinsUnderANewIdentity() throws {
        let store = MemoryStore()
        let (a, b, again) = (NodeID("a"), NodeID("b"), NodeID("a2"))
        _ = try store.register(node: a, leaseMs: 60_000)
        _ = try store.register(node: b, leaseMs: 60_000)
        let reports = Reports()
        let revoked = Mutex<[NodeID]>([])
        let rejoined = Mutex<[StoredState]>([])
        let worker = Self.stallingWorker(store, reports, fencing: a,
                                         onRevoked: { node in revoked.withLock { $0.append(node) } },
                                         onRejoined: { state in rejoined.withLock { $0.append(state) } })
        let deadline = Date(timeIntervalSinceNow: 10)
        worker.start()
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        while reports.durable.withLock({ $0 }).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        // a's connection drops and b ends its lease.
        store.dropConnection(of: a)
        #expect(try store.checkNodes(node: b, leaseMs: 60_000) == [a])
        let domain = PreferenceDomain(workspace: "w", user: "u")
        worker.submit(.persist([Self.session(2)]), sequence: 2)
        worker.submit(.commit(Commit(id: CommitID(1), channel: .preferences(domain), base: 0,
                                     commands: [.putPreference(domain, keyPath: "k", value: 1, version: 1)])), sequence: nil)
        while revoked.withLock({ $0 }).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        worker.submit(.persist([Self.session(3)]), sequence: 3)
        while reports.outcomes.withLock({ $0 }).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(revoked.withLock { $0 } == [a], "told once")
        #expect(reports.durable.withLock { $0 } == [1], "nothing after the end is acknowledged")
        #expect(reports.outcomes.withLock { $0.map(\.0) } == [CommitID(1)])
        #expect(reports.failures.withLock { $0 }.isEmpty, "not a store failure")
        #expect(try store.loadState().sessions.map(\.id.rawValue) == ["s1"])

        // Back as a2: the state is read again for it, and its writes commit.
        _ = try store.register(node: again, leaseMs: 60_000)
        worker.rejoin(as: again)
        while rejoined.withLock({ $0 }).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(rejoined.withLock { $0.first?.sessions.map(\.id.rawValue) } == ["s1"])
        worker.submit(.persist([Self.session(4)]), sequence: 4)
        while reports.durable.withLock({ $0 }).count < 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(reports.durable.withLock { $0 } == [1, 4])
        worker.stop()
        #expect(try store.loadState().sessions.map(\.id.rawValue).sorted() == ["s1", "s4"])
    }

    // MARK: A transaction of unknown outcome (its COMMIT went unanswered)

    /// A store whose COMMIT goes unanswered: the first `apply` either applies the writes or not
    /// (`commits`) and throws `CommitOutcomeUnknown`; `resolve` cannot tell while `reachable`
    /// is false, then says what happened.
    final class LostCommitStore: WrappedMemoryStore, @unchecked Sendable {
        let inner = MemoryStore()
        let commits: Bool
        let reachable = Mutex(false)
        let applies = Mutex(0)
        let asks = Mutex(0)
        private var lost = true

        init(commits: Bool) { self.commits = commits }

        func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
            applies.withLock { $0 += 1 }
            guard lost else { return try inner.apply(writes) }
            lost = false
            let applied = commits ? try inner.apply(writes, resolvingConflicts: { _, _ in nil }) : AppliedWrites()
            // What the claims found comes with the outcomes, as PostgreSQL's `apply` says it.
            throw CommitOutcomeUnknown(transaction: 42, outcomes: applied.outcomes, heldDropsFound: applied.heldDropsFound,
                                       reason: "injected: COMMIT unanswered")
        }
        func resolve(_ unknown: CommitOutcomeUnknown) throws -> Bool {
            asks.withLock { $0 += 1 }
            #expect(unknown.transaction == 42)
            guard reachable.withLock({ $0 }) else { throw MemoryStoreError.injectedFailure }
            return commits
        }
    }

    func lostCommitWorker(_ store: LostCommitStore, _ reports: Reports, timeoutMs: Int = 60_000,
                          policy: StoreFailurePolicy = .stall(minBackoffMs: 10, maxBackoffMs: 40, shutdownGiveUpMs: 1_000))
        -> StoreWorker {
        StoreWorker(store: store, logger: Logger(label: "test"), policy: policy, commitOutcomeTimeoutMs: timeoutMs,
                    onApplied: { report in
                        if let durable = report.durable { reports.durable.withLock { $0.append(durable) } }
                        reports.outcomes.withLock { $0 += report.outcomes }
                        reports.heldDropsFound.withLock { $0 += report.heldDropsFound }
                    },
                    onFailure: { reason in reports.failures.withLock { $0.append(reason) } },
                    onLoaded: { _ in })
    }

    static func set(_ id: UInt64, base: Int64 = 0) -> StoreWrite {
        let domain = PreferenceDomain(workspace: "w", user: "u")
        return .commit(Commit(id: CommitID(id), channel: .preferences(domain), base: base,
                              commands: [.putPreference(domain, keyPath: "k\(id)", value: .int(Int64(id)), version: base + 1)]))
    }

    /// Node c's claim of `session`, the first (a takeover's, say).
    static func claim(_ id: UInt64, _ session: SessionID) -> StoreWrite {
        let claim = SessionClaim(node: NodeID("c"), epoch: 1)
        return .commit(Commit(id: CommitID(id), channel: .coordination(.session(session)), base: 0,
                              commands: [.coordination(.claimSession(session, claim))]))
    }

    static func waitUntil(_ condition: () -> Bool) {
        let deadline = Date(timeIntervalSinceNow: 10)
        while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
    }

    @Test func aTransactionOfUnknownOutcomeThatCommittedIsReportedOnceKnownAndNeverAppliedAgain() throws {
        let store = LostCommitStore(commits: true)
        let reports = Reports()
        let worker = lostCommitWorker(store, reports)
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        worker.submit(Self.set(1), sequence: nil)
        worker.start()
        Self.waitUntil { store.asks.withLock { $0 } >= 3 }
        // Held, not retried, not answered: the store cannot tell yet.
        #expect(store.applies.withLock { $0 } == 1)
        #expect(reports.durable.withLock { $0 }.isEmpty)
        #expect(reports.outcomes.withLock { $0 }.isEmpty)
        // Behind it: a persist waits, a commit is refused at once (it was never tried).
        worker.submit(.persist([Self.session(2)]), sequence: 2)
        worker.submit(Self.set(2, base: 1), sequence: nil)
        Self.waitUntil { reports.outcomes.withLock { $0.count } >= 1 }
        #expect(reports.outcomes.withLock { $0.map(\.0.rawValue) } == [2])
        store.reachable.withLock { $0 = true }
        Self.waitUntil { reports.durable.withLock { $0 }.last == 2 }
        worker.stop()
        #expect(reports.durable.withLock { $0 } == [1, 2], "the held one once known, then what waited behind it")
        #expect(reports.outcomes.withLock { $0.map(\.0.rawValue) } == [2, 1])
        #expect(reports.outcomes.withLock { $0.last?.1 } == .committed)
        #expect(try store.inner.loadState().sessions.map(\.id.rawValue) == ["s1", "s2"], "each once")
        #expect(reports.failures.withLock { $0 }.isEmpty)
    }

    /// A takeover's claim of a session with a drop held for it, in a transaction whose COMMIT
    /// went unanswered: once known committed, the report still says the drop is held, or the
    /// hub would attach without reading it (review D, F1).
    @Test func aClaimOfUnknownOutcomeThatCommittedReportsTheDropsItFoundHeld() throws {
        let store = LostCommitStore(commits: true)
        let window = SessionID("ses_window"), empty = SessionID("ses_empty")
        let held = HeldDrop(session: window, drag: Identifier("drg_a"), event: ["drag": "drg_a"], keptUntil: 5_000)
        try store.inner.apply([.persist([.coordination(.holdDrop(held, forgetBefore: 0))])])
        let reports = Reports()
        let worker = lostCommitWorker(store, reports)
        worker.submit(Self.claim(1, empty), sequence: nil)
        worker.submit(Self.claim(2, window), sequence: nil)
        worker.start()
        Self.waitUntil { store.asks.withLock { $0 } >= 2 }
        #expect(reports.outcomes.withLock { $0 }.isEmpty, "held while unknown")
        store.reachable.withLock { $0 = true }
        Self.waitUntil { reports.outcomes.withLock { $0.count } >= 2 }
        worker.stop()
        #expect(reports.outcomes.withLock { $0.map(\.1) } == [.committed, .committed])
        #expect(reports.heldDropsFound.withLock { $0 } == [window])
    }

    /// A shared store's claims that found drops held for their sessions are reported with the
    /// transaction's outcomes, for the hub to read them at the attach (review D, F6).
    @Test func aClaimThatFoundDropsHeldIsReportedWithItsOutcome() throws {
        let store = StorageOutageAnswersTests.FailingSharedStore()
        let window = SessionID("ses_window"), empty = SessionID("ses_empty")
        let held = HeldDrop(session: window, drag: Identifier("drg_a"), event: ["drag": "drg_a"], keptUntil: 5_000)
        try store.inner.apply([.coordination(.holdDrop(held, forgetBefore: 0))])
        let reports = Reports()
        let worker = StoreWorker(store: store, logger: Logger(label: "test"), policy: .sharedStore,
                                 onApplied: { report in
                                     reports.outcomes.withLock { $0 += report.outcomes }
                                     reports.heldDropsFound.withLock { $0 += report.heldDropsFound }
                                 },
                                 onFailure: { _ in }, onLoaded: { _ in })
        worker.submit(Self.claim(1, empty), sequence: nil)
        worker.submit(Self.claim(2, window), sequence: nil)
        worker.start()
        Self.waitUntil { reports.outcomes.withLock { $0.count } >= 2 }
        worker.stop()
        #expect(reports.outcomes.withLock { $0.map(\.1) } == [.committed, .committed])
        #expect(reports.heldDropsFound.withLock { $0 } == [window])
    }

    @Test func aTransactionOfUnknownOutcomeThatDidNotCommitHasItsPersistsRetriedAndItsCommitsFailed() throws {
        let store = LostCommitStore(commits: false)
        let reports = Reports()
        let worker = lostCommitWorker(store, reports)
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        worker.submit(Self.set(1), sequence: nil)
        worker.start()
        Self.waitUntil { store.asks.withLock { $0 } >= 2 }
        store.reachable.withLock { $0 = true }
        Self.waitUntil { !reports.durable.withLock { $0 }.isEmpty }
        worker.stop()
        #expect(reports.durable.withLock { $0 } == [1])
        #expect(reports.outcomes.withLock { $0.map(\.1) } == [.failed("the transaction did not commit: injected: COMMIT unanswered")])
        #expect(try store.inner.loadState().sessions.map(\.id.rawValue) == ["s1"])
        #expect(try store.inner.loadPreferences(PreferenceDomain(workspace: "w", user: "u")) == nil)
    }

    @Test func pastTheBoundItsCommitsAreReportedUnknownAndLaterWithWhatHappened() {
        let store = LostCommitStore(commits: true)
        let reports = Reports()
        let worker = lostCommitWorker(store, reports, timeoutMs: 100)
        worker.submit(Self.set(1), sequence: nil)
        worker.start()
        Self.waitUntil { reports.outcomes.withLock { $0.count } >= 1 }
        if case .unknown? = reports.outcomes.withLock({ $0.first?.1 }) {} else {
            Issue.record("not reported unknown: \(reports.outcomes.withLock { $0 })")
        }
        store.reachable.withLock { $0 = true }
        Self.waitUntil { reports.outcomes.withLock { $0.count } >= 2 }
        worker.stop()
        #expect(reports.outcomes.withLock { $0.map(\.0.rawValue) } == [1, 1])
        #expect(reports.outcomes.withLock { $0.last?.1 } == .committed)
    }

    @Test func underTheFatalPolicyAnUnknownOutcomeIsNeitherRetriedNorAnswered() {
        let store = LostCommitStore(commits: true)
        let reports = Reports()
        let worker = lostCommitWorker(store, reports, policy: .fatal)
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        worker.submit(Self.set(1), sequence: nil)
        worker.start()
        worker.stop()
        #expect(store.applies.withLock { $0 } == 1, "never tried again: it may have committed")
        #expect(reports.failures.withLock { $0 }.count == 1)
        #expect(reports.durable.withLock { $0 }.isEmpty && reports.outcomes.withLock { $0 }.isEmpty, "nothing answered")
    }

    @Test func atShutdownHeldWritesAreGivenUpAfterTheGiveUpTime() {
        let store = OutageStore()
        let reports = Reports()
        let worker = StoreWorker(store: store, logger: Logger(label: "test"),
                                 policy: .stall(minBackoffMs: 10, maxBackoffMs: 40, shutdownGiveUpMs: 300),
                                 onApplied: { report in
                                     if let durable = report.durable { reports.durable.withLock { $0.append(durable) } }
                                 },
                                 onFailure: { _ in }, onLoaded: { _ in })
        worker.start()
        worker.submit(.persist([Self.session(1)]), sequence: 1)
        let started = Date()
        worker.stop()
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(reports.durable.withLock { $0 }.isEmpty)
    }
}
