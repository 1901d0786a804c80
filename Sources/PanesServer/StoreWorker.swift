// Threading model: the store thread is the only thread that touches the `Store` (and so the
// SQLite connection) after start-up. The service thread submits writes under `lock`; the
// store thread takes everything pending, applies it as ONE transaction (group commit), and
// reports back through the completion closure, which the runtime routes onto the service
// thread with `WebSocketServer.post`: the highest persist sequence made durable and each
// commit's outcome. Only identifiers and value types cross between the threads.
//
// Reads (`load`) wait in the same queue as writes, so a read runs after every write
// submitted before it and sees it; its result goes back through `onLoaded` the same way.
//
// Checkpoints (`Store.checkpoint`, which truncates SQLite's log) run here too, between batches,
// every `checkpointIntervalMs` and once when the thread stops: the connection is this
// thread's alone.
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
    private let checkpointInterval: TimeInterval

    private enum Work {
        /// `sequence` is the persist's number for the durability barrier; nil for commits and
        /// quiet persists, which hold nothing back.
        case write(StoreWrite, sequence: UInt64?)
        case load(LoadRequest)
    }

    /// Transactions and writes committed so far, for `/metrics`. Written on the store thread,
    /// read under the lock.
    private(set) var commits = 0
    private(set) var committedWrites = 0
    private var durations = Histogram()

    /// How long transactions took to apply and become durable; read under the lock.
    var commitDurations: Histogram {
        condition.lock()
        defer { condition.unlock() }
        return durations
    }

    init(store: any Store, logger: Logger, checkpointIntervalMs: Int = 60_000,
         onApplied: @escaping @Sendable (StoreReport) -> Void,
         onFailure: @escaping @Sendable (String) -> Void, onLoaded: @escaping @Sendable (LoadResult) -> Void) {
        self.store = store
        self.logger = logger
        self.onApplied = onApplied
        self.onFailure = onFailure
        self.onLoaded = onLoaded
        self.checkpointInterval = Double(checkpointIntervalMs) / 1000
    }

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
        condition.signal()
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
        while true {
            condition.lock()
            while pending.isEmpty && !stopping && Date() < nextCheckpoint { _ = condition.wait(until: nextCheckpoint) }
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            let done = stopping && batch.isEmpty
            condition.unlock()
            if done { break }
            if Date() >= nextCheckpoint {
                checkpoint()
                nextCheckpoint = Date(timeIntervalSinceNow: checkpointInterval)
            }

            // Consecutive writes commit as one transaction; a read ends the run first, so it
            // sees every write submitted before it and none after.
            var writes: [StoreWrite] = []
            var lastSequence: UInt64?
            func flush() -> Bool {
                guard !writes.isEmpty else { return true }
                let started = DispatchTime.now().uptimeNanoseconds
                guard let outcomes = apply(writes) else {
                    onFailure("the store could not commit \(writes.count) writes")
                    return false
                }
                let committedAt = DispatchTime.now().uptimeNanoseconds
                condition.lock()
                commits += 1
                committedWrites += writes.count
                durations.observe(nanoseconds: committedAt - started)
                condition.unlock()
                let ordered = writes.compactMap { write -> (CommitID, CommitOutcome)? in
                    guard case .commit(let commit) = write else { return nil }
                    return (commit.id, outcomes[commit.id] ?? .failed("no outcome reported"))
                }
                onApplied(StoreReport(durable: lastSequence, outcomes: ordered, committedAt: committedAt))
                writes.removeAll(keepingCapacity: true)
                lastSequence = nil
                return true
            }
            var failed = false
            for work in batch {
                switch work {
                case .write(let write, let sequence):
                    writes.append(write)
                    if let sequence { lastSequence = sequence }
                case .load(let request):
                    guard flush() else { failed = true; break }
                    onLoaded(store.perform(request))
                }
                if failed { break }
            }
            if failed || !flush() { break }
        }
        checkpoint()
        finished.signal()
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

    /// Tries a few times (a busy disk, a transient lock), then gives up: the runtime treats a
    /// store that cannot commit as fatal, because acknowledging without durability would
    /// break the promise every acknowledgement makes.
    private func apply(_ writes: [StoreWrite]) -> [CommitID: CommitOutcome]? {
        for attempt in 1...5 {
            do {
                return try store.apply(writes)
            } catch {
                logger.error("store commit failed", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.05 * Double(attempt))
            }
        }
        return nil
    }
}
