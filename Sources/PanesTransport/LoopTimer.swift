internal import CLibEV
internal import CLibWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// One one-shot timer on the service loop: an ev_timer on libev, a lws_sul on lws's poll loop
/// (whose own timer handling is exact; on libev, lws 4.1's is not, see `pev_timer`). Fires
/// on the service thread. The server keeps a fixed number of these, never one per connection.
final class LoopTimer {
    private let fire: () -> Void
    private let eventLoop: UnsafeMutableRawPointer?
    private let context: OpaquePointer
    private var evTimer: UnsafeMutablePointer<pev_timer>?
    private var sulTimer: UnsafeMutablePointer<pws_timer>?

    /// - Parameters:
    ///   - eventLoop: the libev loop lws runs on, or nil on lws's poll loop.
    init(context: OpaquePointer, eventLoop: UnsafeMutableRawPointer?, fire: @escaping () -> Void) {
        self.context = context
        self.eventLoop = eventLoop
        self.fire = fire
        let owner = Unmanaged.passUnretained(self).toOpaque()
        let callback: @convention(c) (UnsafeMutableRawPointer?) -> Void = { owner in
            guard let owner else { return }
            let timer = Unmanaged<LoopTimer>.fromOpaque(owner).takeUnretainedValue()
            timer.fire()
            // On libev, lws does its deferred work (timeouts that came due, input held back by
            // flow control) in an idle pass that only its own I/O callbacks start; waking it
            // makes that pass run after whatever the timer's work asked of lws.
            if timer.eventLoop != nil { lws_cancel_service(timer.context) }
        }
        if eventLoop != nil {
            let timer = UnsafeMutablePointer<pev_timer>.allocate(capacity: 1)
            pev_timer_init(timer, callback, owner)
            evTimer = timer
        } else {
            let timer = UnsafeMutablePointer<pws_timer>.allocate(capacity: 1)
            pws_timer_init(timer, callback, owner)
            sulTimer = timer
        }
    }

    /// Cancels; call before the lws context and the loop go away.
    func invalidate() {
        if let eventLoop, let evTimer { pev_timer_cancel(eventLoop, evTimer) }
        if let sulTimer { pws_timer_cancel(sulTimer) }
    }

    deinit {
        evTimer?.deallocate()
        sulTimer?.deallocate()
    }

    /// Fires once `milliseconds` from now (at once if 0), replacing any earlier schedule.
    func schedule(afterMilliseconds milliseconds: UInt64) {
        if let eventLoop, let evTimer {
            pev_timer_schedule(eventLoop, evTimer, Double(milliseconds) / 1000)
        } else if let sulTimer {
            pws_timer_schedule(context, sulTimer, Int64(milliseconds) * 1000)
        }
    }

    var isScheduled: Bool {
        if let evTimer { return pev_timer_is_scheduled(evTimer) != 0 }
        if let sulTimer { return pws_timer_is_scheduled(sulTimer) != 0 }
        return false
    }
}
