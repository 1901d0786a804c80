// Threading model: the store thread is the only thread that touches the `Store` (and so the
// SQLite connection) after start-up. The service thread submits batches under `lock`; the
// store thread takes everything pending, commits it as ONE transaction (group commit), and
// reports the highest sequence number made durable back through the completion closure,
// which the runtime routes onto the service thread with `WebSocketServer.post`. Only
// identifiers and value types cross between the threads.
import Foundation
import Logging
import PanesCore

/// Runs a store on its own thread with group commit.
final class StoreWorker: @unchecked Sendable {
    private let store: any Store
    private let condition = NSCondition()
    private var pending: [(sequence: UInt64, commands: [StoreCommand])] = []
    private var stopping = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let logger: Logger
    private let onDurable: @Sendable (UInt64) -> Void
    private let onFailure: @Sendable (String) -> Void

    /// Commits so far and their sizes, for `/metrics`. Written on the store thread, read under the lock.
    private(set) var commits = 0
    private(set) var committedCommands = 0

    init(store: any Store, logger: Logger, onDurable: @escaping @Sendable (UInt64) -> Void,
         onFailure: @escaping @Sendable (String) -> Void) {
        self.store = store
        self.logger = logger
        self.onDurable = onDurable
        self.onFailure = onFailure
    }

    func start() {
        let thread = Thread { [self] in loop() }
        thread.name = "panes-store"
        self.thread = thread
        thread.start()
    }

    func submit(_ commands: [StoreCommand], sequence: UInt64) {
        condition.lock()
        pending.append((sequence, commands))
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
        while true {
            condition.lock()
            while pending.isEmpty && !stopping { condition.wait() }
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            let done = stopping && batch.isEmpty
            condition.unlock()
            if done { break }

            let commands = batch.flatMap(\.commands)
            if commit(commands) {
                condition.lock()
                commits += 1
                committedCommands += commands.count
                condition.unlock()
                onDurable(batch.last!.sequence)
            } else {
                onFailure("the store could not commit \(commands.count) changes")
                break
            }
        }
        finished.signal()
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
