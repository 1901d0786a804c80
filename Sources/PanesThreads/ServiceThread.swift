// Threading: `start`, `stop`, `wake` and `withLock` may be called from any thread; the work
// loop runs on the thread this type starts, and `wait`, `signal` and `stopRequested` are used
// with the lock held (inside `withLock`). The mutex and condition variable are the only shared
// state, which is why the class is `@unchecked Sendable`.
import Foundation
import Glibc

/// One long-lived thread of the server's own (the store thread, the heartbeat, the listener):
/// a named thread running one work loop, a lock for the state other threads hand it, a wait
/// that other threads end early, and one shutdown order.
///
/// The owner keeps its shared state under `withLock`, waits in its loop with `wait(until:)`,
/// and is woken by `wake(_:)` (a change made under the lock, then a signal). Deadlines are
/// monotonic (`MonotonicInstant`): setting the wall clock moves none of them.
///
/// Shutdown (`stop()`), in this order: `stopRequested` is set under the lock and the loop's
/// wait is ended; `interrupt` is called, for a loop that waits outside the lock (on a socket);
/// then `stop()` waits for the loop to return. The loop decides what it finishes first (the
/// store thread commits what is pending); it must return once `stopRequested` holds and that
/// is done. Nothing starts before `start`, and a thread never started is stopped at once.
public final class ServiceThread: @unchecked Sendable {
    public let name: String
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private let interrupt: (@Sendable () -> Void)?
    private let finished = DispatchSemaphore(value: 0)
    /// Under the lock.
    private var stopping = false
    private var state = Lifecycle.idle

    private enum Lifecycle { case idle, running, joined }

    /// - Parameters:
    ///   - name: the thread's name (`ps -L`, debuggers).
    ///   - interrupt: ends a wait of the loop outside the lock (a socket's), called by `wake`
    ///     and `stop` after the lock is let go.
    public init(name: String, interrupt: (@Sendable () -> Void)? = nil) {
        self.name = name
        self.interrupt = interrupt
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Starts the thread running `loop`, once.
    public func start(_ loop: @escaping @Sendable () -> Void) {
        let go = withLock { () -> Bool in
            guard state == .idle, !stopping else { return false }
            state = .running
            return true
        }
        guard go else { return }
        let thread = Thread { [finished] in
            loop()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Asks the loop to finish and waits until it has returned (see the type's documentation).
    /// Later calls return at once.
    public func stop() {
        let wasRunning = withLock { () -> Bool in
            stopping = true
            pthread_cond_broadcast(condition)
            defer { if state == .running { state = .joined } }
            return state == .running
        }
        interrupt?()
        if wasRunning { finished.wait() }
    }

    /// Whether `stop()` was called; read with the lock held.
    public var stopRequested: Bool { stopping }

    /// Whether `stop()` was called; takes the lock.
    public var isStopping: Bool { withLock { stopping } }

    /// Runs `body` with the lock held.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Makes `change` under the lock and wakes the loop, wherever it waits.
    public func wake(_ change: () -> Void = {}) {
        withLock {
            change()
            pthread_cond_broadcast(condition)
        }
        interrupt?()
    }

    /// Ends the loop's `wait`; with the lock held.
    public func signal() {
        pthread_cond_broadcast(condition)
    }

    /// With the lock held: waits until signalled, or until `deadline` (nil: no deadline). May
    /// also return early for no reason, as condition variables do: callers check what they
    /// wait for in a loop.
    public func wait(until deadline: MonotonicInstant?) {
        guard let deadline else {
            pthread_cond_wait(condition, mutex)
            return
        }
        guard deadline > .now() else { return }
        var time = timespec(tv_sec: Int(deadline.nanoseconds / 1_000_000_000),
                            tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        _ = pthread_cond_timedwait(condition, mutex, &time)
    }

    /// Waits until `deadline` or until `stop()` is called, whichever comes first; takes the
    /// lock. For pauses between retries that must not hold up a stop.
    /// - Returns: false when the thread is stopping.
    public func pause(until deadline: MonotonicInstant) -> Bool {
        withLock {
            while !stopping && MonotonicInstant.now() < deadline { wait(until: deadline) }
            return !stopping
        }
    }
}
