internal import CLibWebSockets
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGTERM and SIGINT (drain) and SIGHUP (read configuration again) into work on the
/// service thread. A signal handler may only do
/// async-signal-safe things: it sets a flag and calls `lws_cancel_service`, which writes to
/// lws's wake-up pipe. The service thread then sees the flag in `drainInbox()`.
enum SignalRelay {
    private static let pending = Atomic<Bool>(false)
    private static let reloadPending = Atomic<Bool>(false)
    /// The context to wake. Written once before the handlers are installed, read in the handler.
    nonisolated(unsafe) private static var context: OpaquePointer?

    static func install(context: OpaquePointer?) {
        Self.context = context
        let handler: @convention(c) (Int32) -> Void = { _ in
            SignalRelay.pending.store(true, ordering: .releasing)
            if let context = SignalRelay.context { lws_cancel_service(context) }
        }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
        let reload: @convention(c) (Int32) -> Void = { _ in
            SignalRelay.reloadPending.store(true, ordering: .releasing)
            if let context = SignalRelay.context { lws_cancel_service(context) }
        }
        signal(SIGHUP, reload)
        // A supervisor (or a test runner's worker thread) may have spawned us with these
        // signals blocked, and a blocked SIGTERM would never start the drain.
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTERM)
        sigaddset(&mask, SIGINT)
        sigaddset(&mask, SIGHUP)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
    }

    static func takePending() -> Bool {
        pending.exchange(false, ordering: .acquiringAndReleasing)
    }

    static func takeReloadPending() -> Bool {
        reloadPending.exchange(false, ordering: .acquiringAndReleasing)
    }
}
