// Threading model: the store thread is the only thread that touches the `Store` (and so the
// SQLite connection) after start-up. The service thread submits batches under `lock`; the
// store thread takes everything pending, commits it as ONE transaction (group commit), and
// reports the highest sequence number made durable back through the completion closure,
// which the runtime routes onto the service thread with `WebSocketServer.post`. Only
// identifiers and value types cross between the threads.
//
// Reads (`load`) wait in the same queue as batches, so a read runs after every batch
// submitted before it and sees it; its result goes back through `onLoaded` the same way.
//
// Checkpoints (`Store.checkpoint`, which truncates SQLite's log) run here too, between batches,
// every `checkpointIntervalMs` and once when the thread stops: the connection is this
// thread's alone.
import Foundation
import Logging
import PanesCore

/// Runs a store on its own thread with group commit.
final class StoreWorker: @unchecked Sendable {
    private let store: any Store
    private let condition = NSCondition()
    /// Work in submission order: batches to commit and reads to run.
    private var pending: [Work] = []
    private var stopping = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let logger: Logger
    private let onDurable: @Sendable (UInt64) -> Void
    private let onFailure: @Sendable (String) -> Void
    private let onLoaded: @Sendable (LoadResult) -> Void
    private let checkpointInterval: TimeInterval

    private enum Work {
        case commit(sequence: UInt64, commands: [StoreCommand])
        case load(LoadRequest)
    }

    /// Commits so far and their sizes, for `/metrics`. Written on the store thread, read under the lock.
    private(set) var commits = 0
    private(set) var committedCommands = 0

    init(store: any Store, logger: Logger, checkpointIntervalMs: Int = 60_000,
         onDurable: @escaping @Sendable (UInt64) -> Void,
         onFailure: @escaping @Sendable (String) -> Void, onLoaded: @escaping @Sendable (LoadResult) -> Void) {
        self.store = store
        self.logger = logger
        self.onDurable = onDurable
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

    func submit(_ commands: [StoreCommand], sequence: UInt64) {
        condition.lock()
        pending.append(.commit(sequence: sequence, commands: commands))
        condition.signal()
        condition.unlock()
    }

    /// Queues a read behind everything submitted so far.
    func load(_ request: LoadRequest) {
        condition.lock()
        pending.append(.load(request))
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

    var statistics: (commits: Int, commands: Int, pending: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (commits, committedCommands, pending.count)
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

            // Consecutive batches commit as one transaction; a read ends the run first, so it
            // sees every batch submitted before it and none after.
            var commands: [StoreCommand] = []
            var lastSequence: UInt64?
            func flush() -> Bool {
                guard let sequence = lastSequence else { return true }
                guard commit(commands) else {
                    onFailure("the store could not commit \(commands.count) changes")
                    return false
                }
                condition.lock()
                commits += 1
                committedCommands += commands.count
                condition.unlock()
                onDurable(sequence)
                commands.removeAll(keepingCapacity: true)
                lastSequence = nil
                return true
            }
            var failed = false
            for work in batch {
                switch work {
                case .commit(let sequence, let batchCommands):
                    commands += batchCommands
                    lastSequence = sequence
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
    private func commit(_ commands: [StoreCommand]) -> Bool {
        for attempt in 1...5 {
            do {
                try store.apply(commands)
                return true
            } catch {
                logger.error("store commit failed", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.05 * Double(attempt))
            }
        }
        return false
    }
}
