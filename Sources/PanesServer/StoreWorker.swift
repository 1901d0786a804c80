// Threading model: the store thread is the only thread that touches the `Store` (and so the
// SQLite connection) after start-up. The service thread submits writes under `condition`'s lock; the
// store thread takes everything pending, applies it as ONE transaction (group commit), and
// reports back through the completion closure, which the runtime routes onto the service
// thread with `WebSocketServer.post`: the highest persist sequence made durable and each
// commit's outcome. Only identifiers and value types cross between the threads.
//
// Reads (`load`) wait in the same queue as writes, so a read runs after every write
// submitted before it and sees it; its result goes back through `onLoaded` the same way.
//
// A shared store's document commit that conflicts is resolved inside its transaction, while
// the channel's lock is held (`SharedStore.apply(_:resolvingConflicts:)`): `onConflict` takes
// it to the service thread and waits there for the hub's retry, which replaces it in the
// batch. Its outcome (`behind`) has then been handled, so it is not reported again.
//
// Quiet persists (bookkeeping no answer waits for: a resumed window's `liveSince`) hold
// nothing back, so a batch of nothing but them waits up to `quietWriteDelayMs` for company
// before it commits, and a batch that commits only them is not reported back (there is
// nothing to release). Work that holds something back ends that wait at once. A reconnect
// storm's ten thousand session writes then share a few dozen commits (and fsyncs) instead of
// one commit per window or two, and wake the service thread for none of them.
//
// Checkpoints (`Store.checkpoint`, which truncates SQLite's log) run here too, between batches,
// every `checkpointIntervalMs` and once when the thread stops: the connection is this
// thread's alone.
//
// A failed transaction ends differently by store (`StoreFailurePolicy`): SQLite's is fatal
// after a few tries; a shared store's (PostgreSQL, across a network) is expected to come
// back, so the worker "stalls": the batch's commits are answered `.failed` (the hub's
// retryable `storage_failed`), its persists are kept and retried with backoff, and while
// any are kept, later commits fail at once, later persists join them, and loads fail
// without touching the store. Nothing behind a kept persist is released, so nothing is
// acknowledged that is not committed.
//
// A failure is "nothing was applied" only when the store knows it. A transaction whose
// COMMIT went unanswered and whose fate the store could not ask (`CommitOutcomeUnknown`) is
// neither retried nor reported failed: the worker holds it, with everything behind it as in
// a stall, and asks the store (`Store.resolve`) with backoff until it knows. Committed: its
// persists are durable and its commits report their outcomes. Not committed: its commits are
// `.failed` and its persists join the held ones, to be retried. Its commits wait for that at
// most `commitOutcomeTimeoutMs`; after it they are reported `.unknown` (the hub's
// `outcome_unknown`) and, once known, reported again with the real outcome. Under `.fatal`
// an unknown outcome is never retried: the process stops without answering.
import Foundation
import Logging
import PanesCore

/// What one transaction did: persists up to `durable` are on disk, and each commit has its outcome.
struct StoreReport: Sendable {
    var durable: UInt64?
    var outcomes: [(CommitID, CommitOutcome)]
    /// When the transaction became durable (monotonic nanoseconds), to time the fan-out.
    var committedAt: UInt64 = 0
}

/// What the store thread does when a transaction fails.
enum StoreFailurePolicy: Sendable, Equatable {
    /// An embedded store (SQLite): a few quick retries, then the process exits.
    case fatal
    /// A shared store (PostgreSQL): commits fail, persists are retried from `minBackoffMs`,
    /// doubling up to `maxBackoffMs`, until the database is back; at shutdown they are given
    /// up after `shutdownGiveUpMs` (they were never acknowledged).
    case stall(minBackoffMs: Int, maxBackoffMs: Int, shutdownGiveUpMs: Int)

    /// The shared store's defaults, as the README lists them.
    static let sharedStore = StoreFailurePolicy.stall(minBackoffMs: 50, maxBackoffMs: 2_000, shutdownGiveUpMs: 5_000)
}

/// Runs a store on its own thread with group commit.
final class StoreWorker: @unchecked Sendable {
    private let store: any Store
    private let condition = NSCondition()
    /// Work in submission order: writes to apply and reads to run.
    private var pending: [Work] = []
    private var stopping = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let logger: Logger
    private let onApplied: @Sendable (StoreReport) -> Void
    private let onFailure: @Sendable (String) -> Void
    private let onLoaded: @Sendable (LoadResult) -> Void
    /// Resolves a conflicting document commit (shared stores): its retry, or nil. Called on
    /// the store thread, inside the transaction; it delivers the conflict's outcome itself.
    private let onConflict: (@Sendable (Commit, [StoredOperation]) -> Commit?)?
    private let checkpointInterval: TimeInterval
    private let quietDelay: TimeInterval
    /// The store thread is waiting for company for a batch of quiet persists: more of them
    /// need not wake it (under the lock).
    private var waitingForCompany = false
    /// Something pending holds output back or reads (under the lock): a quiet batch's wait ends.
    private var pendingIsUrgent = false
    private let policy: StoreFailurePolicy
    /// Persists that failed to commit, kept in order for the next try (`.stall` only), with the
    /// highest durability sequence among them, and when to try next.
    private var stalled: [StoreWrite] = []
    private var stalledSequence: UInt64?
    private var retryAt = Date.distantPast
    private var backoff: Backoff
    /// Failures repeat for as long as the store is away: logged at most once per kind every 5 s.
    private var logLimits = LogLimiter()
    /// The reason the last try failed, for the outcomes of commits refused meanwhile.
    private var stallReason = ""
    /// A transaction whose outcome the store could not tell, held until it can.
    private var unresolved: Unresolved?
    /// How long commits wait for an unknown outcome before they are reported `.unknown`.
    private let outcomeTimeout: TimeInterval

    private struct Unresolved {
        let unknown: CommitOutcomeUnknown
        let writes: [StoreWrite]
        let sequence: UInt64?
        let since: Date
        /// Its commits were reported `.unknown` already.
        var reported = false

        /// Each commit's outcome (and each keyed persist's), in the order written, should the
        /// transaction have committed.
        var committedOutcomes: [(CommitID, CommitOutcome)] {
            StoreWorker.reported(writes).map { ($0, unknown.outcomes[$0] ?? .failed("no outcome reported")) }
        }

        var commitIDs: [CommitID] {
            writes.compactMap { if case .commit(let commit) = $0 { commit.id } else { nil } }
        }
    }

    private enum Work {
        /// `sequence` is the persist's number for the durability barrier; nil for commits and
        /// quiet persists, which hold nothing back.
        case write(StoreWrite, sequence: UInt64?)
        case load(LoadRequest)

        /// A persist nothing waits for (see the top of the file). A keyed request's record is not
        /// quiet: its answer waits for the outcome.
        var isQuiet: Bool {
            guard case .write(let write, sequence: nil) = self, case .persist = write else { return false }
            return StoreWorker.reported([write]).isEmpty
        }
    }

    /// Transactions and writes committed so far, for `/metrics`. Written on the store thread,
    /// read under the lock.
    private(set) var commits = 0
    private(set) var committedWrites = 0
    private var durations = Histogram()
    private var waits = Histogram()

    /// How long each conflict resolution waited for the hub's retry; read under the lock.
    var conflictWaits: Histogram {
        condition.lock()
        defer { condition.unlock() }
        return waits
    }

    /// How long transactions took to apply and become durable; read under the lock.
    var commitDurations: Histogram {
        condition.lock()
        defer { condition.unlock() }
        return durations
    }

    init(store: any Store, logger: Logger, checkpointIntervalMs: Int = 60_000, quietWriteDelayMs: Int = 0,
         policy: StoreFailurePolicy = .fatal, commitOutcomeTimeoutMs: Int = 3_000,
         onApplied: @escaping @Sendable (StoreReport) -> Void,
         onFailure: @escaping @Sendable (String) -> Void, onLoaded: @escaping @Sendable (LoadResult) -> Void,
         onConflict: (@Sendable (Commit, [StoredOperation]) -> Commit?)? = nil) {
        self.store = store
        self.onConflict = onConflict
        self.logger = logger
        self.onApplied = onApplied
        self.onFailure = onFailure
        self.onLoaded = onLoaded
        self.checkpointInterval = Double(checkpointIntervalMs) / 1000
        self.quietDelay = Double(quietWriteDelayMs) / 1000
        self.policy = policy
        if case .stall(let minMs, let maxMs, _) = policy {
            backoff = Backoff(minMs: Millis(minMs), maxMs: Millis(maxMs))
        } else {
            backoff = .sharedStore
        }
        outcomeTimeout = Double(commitOutcomeTimeoutMs) / 1000
    }

    /// Writes kept for retry because the store could not commit them; read under the lock.
    var stalledWrites: Int {
        condition.lock()
        defer { condition.unlock() }
        return stalledCount
    }
    private var stalledCount = 0

    func start() {
        let thread = Thread { [self] in loop() }
        thread.name = "panes-store"
        self.thread = thread
        thread.start()
    }

    func submit(_ write: StoreWrite, sequence: UInt64?) {
        enqueue(.write(write, sequence: sequence))
    }

    /// Queues a read behind everything submitted so far.
    func load(_ request: LoadRequest) {
        enqueue(.load(request))
    }

    private func enqueue(_ work: Work) {
        condition.lock()
        pending.append(work)
        if !work.isQuiet { pendingIsUrgent = true }
        if !waitingForCompany || pendingIsUrgent { condition.signal() }
        condition.unlock()
    }

    /// Commits what is pending, then ends the thread. Blocks until done.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        if thread != nil { finished.wait() }
    }

    var statistics: (commits: Int, writes: Int, pending: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (commits, committedWrites, pending.count)
    }

    private func loop() {
        var nextCheckpoint = Date(timeIntervalSinceNow: checkpointInterval)
        var stopRequested: Date?
        while true {
            condition.lock()
            while pending.isEmpty {
                if stalled.isEmpty && unresolved == nil {
                    if stopping || Date() >= nextCheckpoint { break }
                    _ = condition.wait(until: nextCheckpoint)
                } else {
                    // Stopping does not end a stall early: the retry (and the give-up) decide.
                    if Date() >= retryAt { break }
                    _ = condition.wait(until: retryAt)
                }
            }
            if quietDelay > 0, !pending.isEmpty, !pendingIsUrgent, !stopping, stalled.isEmpty {
                let deadline = Date(timeIntervalSinceNow: quietDelay)
                waitingForCompany = true
                while !pendingIsUrgent && !stopping && Date() < deadline { _ = condition.wait(until: deadline) }
                waitingForCompany = false
            }
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            pendingIsUrgent = false
            let isStopping = stopping
            condition.unlock()
            if isStopping && stopRequested == nil { stopRequested = Date() }
            if isStopping && batch.isEmpty && stalled.isEmpty && unresolved == nil { break }
            if Date() >= nextCheckpoint {
                if stalled.isEmpty && unresolved == nil { checkpoint() }
                nextCheckpoint = Date(timeIntervalSinceNow: checkpointInterval)
            }
            guard stalled.isEmpty && unresolved == nil else {
                absorb(batch[...])
                retryUnresolved()
                if unresolved == nil { retryStalled() }
                if stalled.isEmpty && unresolved == nil { continue }
                if case .stall(_, _, let giveUpMs) = policy, let stopRequested,
                   Date().timeIntervalSince(stopRequested) * 1000 >= Double(giveUpMs) {
                    logger.error("store unavailable at shutdown; giving up writes that were never acknowledged",
                                 metadata: ["writes": "\(stalled.count + (unresolved?.writes.count ?? 0))",
                                            "error": "\(stallReason)"])
                    break
                }
                continue
            }

            // Consecutive writes commit as one transaction; a read ends the run first, so it
            // sees every write submitted before it and none after.
            var writes: [StoreWrite] = []
            var lastSequence: UInt64?
            /// Commits `writes`; false when they failed (and, when stalling, were kept).
            func flush() -> Bool {
                guard !writes.isEmpty else { return true }
                let started = DispatchTime.now().uptimeNanoseconds
                let outcomes: [CommitID: CommitOutcome]
                switch apply(&writes) {
                case .success(let applied):
                    outcomes = applied
                case .failure(let failure):
                    if policy == .fatal {
                        // Nothing is answered: the runtime stops, and a retry (with its key) finds
                        // whatever a commit of unknown outcome left.
                        onFailure("the store could not commit \(writes.count) writes: \(failure)")
                    } else if let unknown = failure.unknown {
                        hold(writes, sequence: lastSequence, unknown: unknown)
                    } else {
                        stall(writes, sequence: lastSequence, reason: failure.reason)
                    }
                    writes.removeAll(keepingCapacity: true)
                    lastSequence = nil
                    return false
                }
                let committedAt = DispatchTime.now().uptimeNanoseconds
                condition.lock()
                commits += 1
                committedWrites += writes.count
                durations.observe(nanoseconds: committedAt - started)
                condition.unlock()
                let ordered = Self.reported(writes).map { ($0, outcomes[$0] ?? .failed("no outcome reported")) }
                // Quiet persists and signals release nothing: no need to wake the service thread.
                if lastSequence != nil || !ordered.isEmpty {
                    onApplied(StoreReport(durable: lastSequence, outcomes: ordered, committedAt: committedAt))
                }
                writes.removeAll(keepingCapacity: true)
                lastSequence = nil
                return true
            }
            var failedAt: Int?
            for (index, work) in batch.enumerated() {
                switch work {
                case .write(let write, let sequence):
                    writes.append(write)
                    if let sequence { lastSequence = sequence }
                case .load(let request):
                    guard flush() else { failedAt = index; break }
                    onLoaded(store.perform(request))
                }
                if failedAt != nil { break }
            }
            if failedAt == nil && !flush() { failedAt = batch.count }
            guard let failedAt else { continue }
            if policy == .fatal { break }
            // Stalled: what came after the failed run waits or fails like anything newer.
            absorb(batch[failedAt...])
        }
        if stalled.isEmpty && unresolved == nil { checkpoint() }
        finished.signal()
    }

    // MARK: Stalling (shared stores)

    /// Holds a transaction whose outcome is unknown: nothing of it is retried or reported until
    /// `retryUnresolved` finds out; what comes after waits or fails as in a stall.
    private func hold(_ writes: [StoreWrite], sequence: UInt64?, unknown: CommitOutcomeUnknown) {
        if stalled.isEmpty { backoff.succeeded() }
        logger.error("a transaction's outcome is unknown; holding it and asking until the store can tell",
                     metadata: ["transaction": "\(unknown.transaction)", "error": "\(unknown.reason)"])
        stallReason = unknown.reason
        unresolved = Unresolved(unknown: unknown, writes: writes, sequence: sequence, since: Date())
        retryAt = Date(timeIntervalSinceNow: Double(backoff.failed()) / 1000)
        condition.lock()
        stalledCount = stalled.count + writes.count
        condition.unlock()
    }

    /// Asks the store whether the held transaction committed, if its time has come; past the
    /// bound, its commits are reported `.unknown` (once).
    private func retryUnresolved() {
        guard var held = unresolved, Date() >= retryAt else { return }
        let committed: Bool
        do {
            committed = try store.resolve(held.unknown)
        } catch {
            stallReason = "\(error)"
            retryAt = Date(timeIntervalSinceNow: Double(backoff.failed()) / 1000)
            let deadline = held.since.addingTimeInterval(outcomeTimeout)
            if !held.reported {
                if Date() >= deadline {
                    held.reported = true
                    logger.error("a transaction's outcome is still unknown; its commits are answered outcome_unknown",
                                 metadata: ["transaction": "\(held.unknown.transaction)", "error": "\(error)"])
                    onApplied(StoreReport(durable: nil, outcomes: held.commitIDs.map { ($0, .unknown("\(error)")) }))
                } else {
                    retryAt = min(retryAt, deadline)
                }
            }
            unresolved = held
            return
        }
        unresolved = nil
        if committed {
            logger.notice("the held transaction committed", metadata: ["transaction": "\(held.unknown.transaction)"])
            let committedAt = DispatchTime.now().uptimeNanoseconds
            condition.lock()
            commits += 1
            committedWrites += held.writes.count
            stalledCount = stalled.count
            condition.unlock()
            onApplied(StoreReport(durable: held.sequence, outcomes: held.committedOutcomes, committedAt: committedAt))
            retryAt = .distantPast
        } else {
            // Not applied: its commits failed, its persists are retried ahead of those held after it.
            logger.notice("the held transaction did not commit; its writes are retried",
                          metadata: ["transaction": "\(held.unknown.transaction)"])
            let reason = "the transaction did not commit: \(held.unknown.reason)"
            let failed = held.commitIDs.map { ($0, CommitOutcome.failed(reason)) }
            let persists = held.writes.filter { if case .commit = $0 { false } else { true } }
            stalled.insert(contentsOf: persists, at: 0)
            if let sequence = held.sequence { stalledSequence = max(stalledSequence ?? 0, sequence) }
            condition.lock()
            stalledCount = stalled.count
            condition.unlock()
            if !failed.isEmpty { onApplied(StoreReport(durable: nil, outcomes: failed)) }
            retryAt = .distantPast
        }
    }

    /// Keeps a failed run's persists for retry and answers its commits `.failed`.
    private func stall(_ writes: [StoreWrite], sequence: UInt64?, reason: String) {
        if stalled.isEmpty {
            backoff.succeeded()
            logLimits.log(logger, .error, "store unavailable; holding writes and retrying", metadata: ["error": "\(reason)"],
                          now: Self.nowMs)
        }
        stallReason = reason
        retryAt = Date(timeIntervalSinceNow: Double(backoff.failed()) / 1000)
        absorb(writes.map { Work.write($0, sequence: nil) }[...])
        if let sequence { stalledSequence = max(stalledSequence ?? 0, sequence) }
    }

    /// Work that arrives while persists are stalled: commits fail now (never applied ahead of
    /// the persists before them), persists join the stalled ones in order, loads fail without
    /// reading (they must see the stalled persists, which are not in the store).
    private func absorb(_ works: ArraySlice<Work>) {
        var failed: [(CommitID, CommitOutcome)] = []
        for work in works {
            switch work {
            case .write(.commit(let commit), _):
                failed.append((commit.id, .failed(stallReason)))
            case .write(let write, let sequence):
                stalled.append(write)
                if let sequence { stalledSequence = max(stalledSequence ?? 0, sequence) }
            case .load(let request):
                if !failed.isEmpty {
                    onApplied(StoreReport(durable: nil, outcomes: failed))
                    failed.removeAll()
                }
                onLoaded(Self.unavailable(request, stallReason))
            }
        }
        if !failed.isEmpty { onApplied(StoreReport(durable: nil, outcomes: failed)) }
        condition.lock()
        stalledCount = stalled.count + (unresolved?.writes.count ?? 0)
        condition.unlock()
    }

    /// Tries the stalled persists once if their time has come; on success they are durable and
    /// whatever waited behind them is released.
    private func retryStalled() {
        guard !stalled.isEmpty, Date() >= retryAt else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        let outcomes: [CommitID: CommitOutcome]
        do {
            outcomes = try store.apply(stalled)
        } catch let unknown as CommitOutcomeUnknown {
            // The retry's own COMMIT went unanswered: held and asked about like any other.
            let held = stalled
            stalled.removeAll()
            let sequence = stalledSequence
            stalledSequence = nil
            hold(held, sequence: sequence, unknown: unknown)
            return
        } catch {
            stallReason = "\(error)"
            retryAt = Date(timeIntervalSinceNow: Double(backoff.failed()) / 1000)
            logLimits.log(logger, .warning, "store still unavailable", metadata: ["writes": "\(stalled.count)", "error": "\(error)"],
                          now: Self.nowMs)
            return
        }
        let committedAt = DispatchTime.now().uptimeNanoseconds
        let suppressed = logLimits.reset("store still unavailable")
        logger.notice("store available again; held writes committed",
                      metadata: ["writes": "\(stalled.count)", "retriesNotLogged": "\(suppressed)"])
        condition.lock()
        commits += 1
        committedWrites += stalled.count
        durations.observe(nanoseconds: committedAt - started)
        stalledCount = 0
        condition.unlock()
        let durable = stalledSequence
        // Held keyed persists say whether they went in (another node's attempt may have won meanwhile).
        let reported = Self.reported(stalled).map { ($0, outcomes[$0] ?? .failed("no outcome reported")) }
        stalled.removeAll()
        stalledSequence = nil
        onApplied(StoreReport(durable: durable, outcomes: reported, committedAt: committedAt))
    }

    static var nowMs: Millis { Millis(Date().timeIntervalSince1970 * 1000) }

    /// A load refused because the store cannot be reached.
    private static func unavailable(_ request: LoadRequest, _ reason: String) -> LoadResult {
        let failure = "the store is unavailable: \(reason)"
        switch request {
        case .document(let id, _): return .document(id, nil, failure: failure)
        case .preferences(let domain): return .preferences(domain, nil, failure: failure)
        case .preferenceChanges(let domain, _): return .preferenceChanges(domain, nil, failure: failure)
        case .operations(let id, _): return .operations(id, nil, failure: failure)
        case .recordChanges: return .recordChanges(nil, failure: failure)
        case .reserveRequestKeys(let keys, _, _): return .requestKeysReserved(keys, [:], failure: failure)
        case .records(let sessions, let documents):
            return .records(sessions: sessions, documents: documents, nil, failure: failure)
        case .requestRecords(let slots): return .requestRecords(slots, [], failure: failure)
        case .versions(let read): return .versions(read, nil, failure: failure)
        }
    }

    /// A failed checkpoint loses nothing (the log still holds every commit); it is logged and
    /// tried again at the next interval.
    private func checkpoint() {
        do {
            try store.checkpoint()
        } catch {
            logger.warning("store checkpoint failed", metadata: ["error": "\(error)"])
        }
    }

    /// Tries a few times (a busy disk, a transient lock), then gives up. Under `.fatal` the
    /// runtime then treats the store as failed, because acknowledging without durability would
    /// break the promise every acknowledgement makes; under `.stall` one more try is made (a
    /// connection found dead reconnects on the next call) before the writes are held.
    /// - Parameter writes: a conflicting commit resolved on the way is replaced by its retry
    ///   (or dropped), whether the transaction then commits or not: the hub has moved on to it.
    private func apply(_ writes: inout [StoreWrite]) -> Result<[CommitID: CommitOutcome], StoreApplyFailure> {
        let attempts = policy == .fatal ? 5 : 2
        var reason = ""
        for attempt in 1...attempts {
            var resolved: [CommitID: Commit?] = [:]
            defer { if !resolved.isEmpty { Self.replace(resolved, in: &writes) } }
            do {
                guard let onConflict, let shared = store as? any SharedStore else { return .success(try store.apply(writes)) }
                return .success(try shared.apply(writes) { commit, operations in
                    let asked = DispatchTime.now().uptimeNanoseconds
                    let retry = onConflict(commit, operations)
                    resolved[commit.id] = .some(retry)
                    let waited = DispatchTime.now().uptimeNanoseconds - asked
                    condition.lock()
                    waits.observe(nanoseconds: waited)
                    condition.unlock()
                    return retry
                })
            } catch let unknown as CommitOutcomeUnknown {
                // It may have committed: trying the same writes again could apply them twice.
                logger.error("store commit's outcome is unknown", metadata: ["attempt": "\(attempt)", "error": "\(unknown)"])
                return .failure(StoreApplyFailure(reason: "\(unknown)", unknown: unknown))
            } catch {
                // The store knows nothing of it was applied (`Store.apply`): safe to try again.
                reason = "\(error)"
                logLimits.log(logger, .error, "store commit failed", metadata: ["attempt": "\(attempt)", "error": "\(error)"],
                              now: Self.nowMs)
                if attempt < attempts { Thread.sleep(forTimeInterval: 0.05 * Double(attempt)) }
            }
        }
        return .failure(StoreApplyFailure(reason: reason))
    }
}

extension StoreWorker {
    /// What a transaction reports an outcome for, in the order written: each commit, and each
    /// keyed persist of a cluster node (`StoreCommand.recordKeyedRequest`).
    static func reported(_ writes: [StoreWrite]) -> [CommitID] {
        writes.flatMap { write -> [CommitID] in
            switch write {
            case .commit(let commit): [commit.id]
            case .persist(let commands):
                commands.compactMap { if case .recordKeyedRequest(_, _, let report?) = $0 { report } else { nil } }
            case .signal: []
            }
        }
    }

    /// Puts each resolved commit's retry in its place (or takes it out when there was none).
    static func replace(_ resolved: [CommitID: Commit?], in writes: inout [StoreWrite]) {
        writes = writes.compactMap { write in
            guard case .commit(let commit) = write, let retry = resolved[commit.id] else { return write }
            return retry.map(StoreWrite.commit)
        }
    }
}

/// Why a transaction could not be committed: the store's last error, as text, and whether it
/// may have committed after all.
struct StoreApplyFailure: Error, CustomStringConvertible {
    var reason: String
    /// Set when the store cannot tell whether the transaction committed.
    var unknown: CommitOutcomeUnknown?
    var description: String { reason }
}
