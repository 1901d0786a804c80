// Threading: made and waited on by the store thread; answered by the service thread. The
// state is guarded by `condition`, which is why the class is `@unchecked Sendable`.
import Foundation
import PanesCore

/// One conflicting document commit that the store thread holds the channel's lock for, while
/// the hub (on the service thread) applies what the store read and makes its retry.
final class ConflictResolution: @unchecked Sendable {
    private enum State {
        case waiting
        case answered(Commit?)
        /// The store thread stopped waiting: an answer now goes the ordinary way.
        case abandoned
    }

    private let condition = NSCondition()
    private var state = State.waiting

    /// The hub's retry (nil: none), or nil after `timeoutMs` without an answer.
    func wait(timeoutMs: Int) -> Commit? {
        let deadline = Date(timeIntervalSinceNow: Double(timeoutMs) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while case .waiting = state {
            guard condition.wait(until: deadline) else { break }
        }
        if case .answered(let retry) = state { return retry }
        state = .abandoned
        return nil
    }

    /// Hands the retry to the waiting store thread.
    /// - Returns: false when it had stopped waiting (the caller submits the retry itself).
    func answer(_ retry: Commit?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard case .waiting = state else { return false }
        state = .answered(retry)
        condition.signal()
        return true
    }
}
