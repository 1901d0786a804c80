// Threading model: the store thread (a `ServiceThread`) is the only thread that touches the
// `Store` (and so the SQLite connection) after start-up. The service thread submits writes
// under that thread's lock; the store thread takes everything pending, applies it as ONE
// transaction (group commit), and reports back through the completion closure, which the runtime routes onto the service
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
// The service thread hands quiet persists over once a loop turn, not one at a time
// (`submitQuietly`, `handOver`): they wait in `outbox`, which only that thread touches, until
// the loop is about to wait, or until anything else is submitted (which takes them along
// first, so the order is kept). A storm's turn of dozens of resumes then takes the store
// thread's lock once, not once a resume: fewer lock round trips on the loop, and fewer
// chances to find the lock held by a store thread that the scheduler has just preempted.
//
// Checkpoints (`Store.checkpoint`, which truncates SQLite's log) run here too, between batches,
// every `checkpointIntervalMs` and once when the thread stops: the connection is this
// thread's alone. Every wait and retry here is timed on the monotonic clock.
//
// Files: this one holds the queue and the loop; `StoreWorker+Batch.swift` commits a batch,
// `StoreWorker+Stall.swift` holds writes while a shared store is away or a commit's outcome
// is unknown, `StoreWorker+Revoked.swift` handles a node whose lease ended.
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
//
// A shared store's writes are fenced (`SharedStore.fence(as:leaseMs:)`): a transaction of a node
// whose lease has ended throws `NodeRevoked` and applies nothing. The worker then tries nothing
// more (`onRevoked`): its writes are dropped, held ones too (none was acknowledged), commits fail
// and loads fail, until the runtime has it fence as the node's new identity and reload the
// state (`rejoin`), which drops whatever is still queued.
import Foundation
import Logging
import PanesCore
import PanesThreads

/// Runs a store on its own thread with group commit.
final class StoreWorker: @unchecked Sendable {
    let store: any Store
    /// The store's shared side (PostgreSQL), for fencing and conflict resolution; nil alone.
    let shared: (any SharedStore)?
    /// The store thread; its lock guards `pending`, `rejoinAs`, `waitingForCompany`,
    /// `pendingIsUrgent` and the statistics.
    let thread = ServiceThread(name: "panes-store")
    /// Work in submission order: writes to apply and reads to run.
    var pending: [Work] = []
    /// Quiet persists not handed over yet (`submitQuietly`): the submitting thread's alone, no lock.
    private var outbox: [Work] = []
    let logger: Logger
    let onApplied: @Sendable (StoreReport) -> Void
    let onFailure: @Sendable (String) -> Void
    let onLoaded: @Sendable (LoadResult) -> Void
    /// The node's lease has ended (a transaction was refused by its fence); once per identity.
    let onRevoked: @Sendable (NodeID) -> Void
    /// The state loaded for the node's new identity (`rejoin`).
    let onRejoined: @Sendable (StoredState) -> Void
    /// The identity whose lease has ended, while the worker refuses everything; store thread only.
    var revoked: NodeID?
    /// The node whose writes the store makes (`SharedStore.fence`), and its lease; set on the
    /// store thread at start and by a rejoin.
    var fencing: NodeID?
    let leaseMs: Int
    /// A new identity to fence as, asked for by `rejoin`; under the lock.
    var rejoinAs: NodeID?
    /// Resolves a conflicting document commit (shared stores): its retry, or nil. Called on
    /// the store thread, inside the transaction; it delivers the conflict's outcome itself.
    let onConflict: (@Sendable (Commit, [StoredOperation]) -> Commit?)?
    let checkpointIntervalMs: Int
    let quietDelayMs: Int
    /// The store thread is waiting for company for a batch of quiet persists: more of them
    /// need not wake it (under the lock).
    var waitingForCompany = false
    /// Something pending holds output back or reads (under the lock): a quiet batch's wait ends.
    var pendingIsUrgent = false
    let policy: StoreFailurePolicy
    /// Persists that failed to commit, kept in order for the next try (`.stall` only), with the
    /// highest durability sequence among them, and when to try next.
    var stalled: [StoreWrite] = []
    var stalledSequence: UInt64?
    var retryAt = MonotonicInstant.distantPast
    var backoff: Backoff
    /// Failures repeat for as long as the store is away: logged at most once per kind every 5 s.
    var logLimits = LogLimiter()
    /// The reason the last try failed, for the outcomes of commits refused meanwhile.
    var stallReason = ""
    /// A transaction whose outcome the store could not tell, held until it can.
    var unresolved: Unresolved?
    /// How long commits wait for an unknown outcome before they are reported `.unknown`.
    let outcomeTimeoutMs: Int

    enum Work {
        /// `sequence` is the persist's number for the durability barrier; nil for commits and
        /// quiet persists, which hold nothing back.
        case write(StoreWrite, sequence: UInt64?)
        case load(LoadRequest)

        /// A persist nothing waits for (see the top of the file). A keyed request's record is not
        /// quiet: its answer waits for the outcome.
        var isQuiet: Bool {
            // `StoreWorker.reported` of this one write, is empty: asked of each command in place,
            // not of an array made for it (on the service thread, for every write submitted).
            guard case .write(.persist(let commands), sequence: nil) = self else { return false }
            return !commands.contains { $0.keyedReport != nil }
        }
    }

    /// Transactions and writes committed so far, for `/metrics`. Written on the store thread,
    /// read under the lock.
    var commits = 0
    var committedWrites = 0
    var durations = Histogram()
    var waits = Histogram()
    /// Writes kept for retry; written on the store thread under the lock.
    var stalledCount = 0

    /// How long each conflict resolution waited for the hub's retry; read under the lock.
    var conflictWaits: Histogram { thread.withLock { waits } }

    /// How long transactions took to apply and become durable; read under the lock.
    var commitDurations: Histogram { thread.withLock { durations } }

    init(store: any Store, logger: Logger, checkpointIntervalMs: Int = 60_000, quietWriteDelayMs: Int = 0,
         policy: StoreFailurePolicy = .fatal, commitOutcomeTimeoutMs: Int = 3_000,
         onApplied: @escaping @Sendable (StoreReport) -> Void,
         onFailure: @escaping @Sendable (String) -> Void, onLoaded: @escaping @Sendable (LoadResult) -> Void,
         onConflict: (@Sendable (Commit, [StoredOperation]) -> Commit?)? = nil,
         fencing: NodeID? = nil, leaseMs: Int = 5_000,
         onRevoked: @escaping @Sendable (NodeID) -> Void = { _ in },
         onRejoined: @escaping @Sendable (StoredState) -> Void = { _ in }) {
        self.store = store
        shared = store.shared
        self.fencing = fencing
        self.leaseMs = leaseMs
        self.onRevoked = onRevoked
        self.onRejoined = onRejoined
        self.onConflict = onConflict
        self.logger = logger
        self.onApplied = onApplied
        self.onFailure = onFailure
        self.onLoaded = onLoaded
        self.checkpointIntervalMs = checkpointIntervalMs
        quietDelayMs = quietWriteDelayMs
        self.policy = policy
        if case .stall(let minMs, let maxMs, _) = policy {
            backoff = Backoff(minMs: Millis(minMs), maxMs: Millis(maxMs))
        } else {
            backoff = .sharedStore
        }
        outcomeTimeoutMs = commitOutcomeTimeoutMs
    }

    /// Writes kept for retry because the store could not commit them; read under the lock.
    var stalledWrites: Int { thread.withLock { stalledCount } }

    func start() {
        thread.start { [self] in run() }
    }

    func submit(_ write: StoreWrite, sequence: UInt64?) {
        enqueue(.write(write, sequence: sequence))
    }

    /// A persist nothing waits for (`Work.isQuiet`), kept on the submitting thread until
    /// `handOver()` or the next `submit` or `load`, which take it along first. One that is not
    /// quiet after all (a keyed request's record) is submitted at once.
    func submitQuietly(_ write: StoreWrite) {
        let work = Work.write(write, sequence: nil)
        guard work.isQuiet else { return enqueue(work) }
        outbox.append(work)
    }

    /// Hands the quiet persists kept by `submitQuietly` to the store thread, under one lock:
    /// the service thread calls it before its loop waits, and `stop` before the thread ends.
    func handOver() {
        guard !outbox.isEmpty else { return }
        thread.withLock {
            takeOutbox()
            if !waitingForCompany || pendingIsUrgent { thread.signal() }
        }
    }

    /// Queues a read behind everything submitted so far.
    func load(_ request: LoadRequest) {
        enqueue(.load(request))
    }

    private func enqueue(_ work: Work) {
        let quiet = work.isQuiet  // before the lock, which the store thread waits for
        thread.withLock {
            takeOutbox()
            pending.append(work)
            if !quiet { pendingIsUrgent = true }
            if !waitingForCompany || pendingIsUrgent { thread.signal() }
        }
    }

    /// Moves the outbox into `pending` (under the lock, on the submitting thread): a swap of the
    /// two arrays when the store thread has taken everything, which is usual.
    private func takeOutbox() {
        guard !outbox.isEmpty else { return }
        if pending.isEmpty {
            swap(&pending, &outbox)
        } else {
            pending.append(contentsOf: outbox)
            outbox.removeAll(keepingCapacity: true)
        }
    }

    /// The node comes back as `node` (its previous identity's lease ended): drops every write
    /// and read still queued, and any held (none was acknowledged), fences the store's writes
    /// as `node`, and loads the whole state again for the new hub (`onRejoined`), retrying with
    /// backoff while the store is away.
    func rejoin(as node: NodeID) {
        outbox.removeAll()
        thread.wake {
            pending.removeAll()
            rejoinAs = node
        }
    }

    /// Commits what is pending (the quiet persists kept by `submitQuietly` too), then ends the
    /// thread. Blocks until done. On the submitting thread.
    func stop() {
        handOver()
        thread.stop()
    }

    /// Read on the submitting thread (the outbox is its own).
    var statistics: (commits: Int, writes: Int, pending: Int) {
        let kept = outbox.count
        return thread.withLock { (commits, committedWrites, pending.count + kept) }
    }

    /// Nothing is held: no stalled persists and no transaction of unknown outcome.
    var isClear: Bool { stalled.isEmpty && unresolved == nil }

    /// When the loop checkpoints next, and when a stop was first seen.
    struct Timing {
        var nextCheckpoint: MonotonicInstant
        var stopRequested: MonotonicInstant?
    }

    /// What the loop does next.
    private enum Turn {
        case rejoin(NodeID)
        case again
        case work([Work], stopping: Bool)
    }

    /// The store thread's loop: takes what is pending, commits it, until stopped and done.
    private func run() {
        var timing = Timing(nextCheckpoint: .after(milliseconds: checkpointIntervalMs))
        shared?.fence(as: fencing, leaseMs: leaseMs)
        loop: while true {
            switch next(timing) {
            case .rejoin(let node):
                guard reload(as: node) else { break loop }
            case .again:
                continue
            case .work(let batch, let stopping):
                guard turn(batch, stopping: stopping, &timing) else { break loop }
            }
        }
        if isClear { checkpoint() }
    }

    /// Waits for work (or a checkpoint's or retry's time), then takes everything pending.
    private func next(_ timing: Timing) -> Turn {
        thread.withLock {
            if let node = rejoinAs {
                rejoinAs = nil
                return .rejoin(node)
            }
            while pending.isEmpty && rejoinAs == nil {
                if isClear {
                    if thread.stopRequested || MonotonicInstant.now() >= timing.nextCheckpoint { break }
                    thread.wait(until: timing.nextCheckpoint)
                } else {
                    // Stopping does not end a stall early: the retry (and the give-up) decide.
                    if MonotonicInstant.now() >= retryAt { break }
                    thread.wait(until: retryAt)
                }
            }
            if rejoinAs != nil { return .again }
            if quietDelayMs > 0, !pending.isEmpty, !pendingIsUrgent, !thread.stopRequested, stalled.isEmpty {
                let deadline = MonotonicInstant.after(milliseconds: quietDelayMs)
                waitingForCompany = true
                while !pendingIsUrgent && !thread.stopRequested && MonotonicInstant.now() < deadline {
                    thread.wait(until: deadline)
                }
                waitingForCompany = false
            }
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            pendingIsUrgent = false
            return .work(batch, stopping: thread.stopRequested)
        }
    }

    /// One turn of the loop with a batch taken; false when the thread is done.
    private func turn(_ batch: [Work], stopping: Bool, _ timing: inout Timing) -> Bool {
        if stopping && timing.stopRequested == nil { timing.stopRequested = .now() }
        if stopping && batch.isEmpty && isClear { return false }
        let checkpointDue = MonotonicInstant.now() >= timing.nextCheckpoint
        if checkpointDue { timing.nextCheckpoint = .after(milliseconds: checkpointIntervalMs) }
        guard revoked == nil else {
            absorb(batch[...])
            return true
        }
        if checkpointDue && isClear { checkpoint() }
        guard isClear else { return whileHeld(batch, stopRequested: timing.stopRequested) }
        guard let failedAt = commit(batch) else { return true }
        if policy == .fatal { return false }
        // Stalled: what came after the failed run waits or fails like anything newer.
        absorb(batch[failedAt...])
        return true
    }

    /// A failed checkpoint loses nothing (the log still holds every commit); it is logged and
    /// tried again at the next interval.
    func checkpoint() {
        do {
            try store.checkpoint()
        } catch {
            logger.warning("store checkpoint failed", metadata: ["error": "\(error)"])
        }
    }

    /// Milliseconds on the monotonic clock, for the log limiter's intervals.
    static var nowMs: Millis { MonotonicInstant.now().milliseconds }
}
