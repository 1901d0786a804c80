import Synchronization

/// Work handed to the service thread from other threads (the store thread's reports and loads,
/// the cluster's heartbeat and listener). Termination signals do not come this way: the signal
/// handler only sets `SignalRelay`'s flag and wakes lws.
/// Producers append under the lock and wake lws with `lws_cancel_service`; the service thread
/// drains the whole inbox at once on `LWS_CALLBACK_EVENT_WAIT_CANCELLED`, which may also
/// arrive with nothing in it.
final class Inbox: Sendable {
    private let work = Mutex<[@Sendable () -> Void]>([])

    func append(_ item: @escaping @Sendable () -> Void) {
        work.withLock { $0.append(item) }
    }

    func drain() -> [@Sendable () -> Void] {
        work.withLock { items in
            defer { items.removeAll(keepingCapacity: true) }
            return items
        }
    }
}
