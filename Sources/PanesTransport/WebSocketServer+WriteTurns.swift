// Threading: the service thread's; the prepare watcher runs on the loop that thread runs.
internal import CLibEV
internal import CLibWebSockets

/// A reply to a connection's own message, written before the loop next waits instead of after
/// a round trip through the kernel (libev only).
///
/// What a message causes for its own connection must not overtake a pong lws owes for a ping
/// that arrived before it (`canWriteNow`), and only lws knows whether it owes one. Asking lws
/// for a WRITEABLE callback keeps that order (lws writes its pong first), but costs two
/// epoll_ctl per reply (write interest on, then off) and a loop turn. Instead the connection
/// gets a write turn at the start of the next loop turn (a libev prepare watcher), taken the way
/// lws's libev glue takes one when the kernel reports the socket writable
/// (`pws_service_writable`): lws writes what it holds first, and calls WRITEABLE only when
/// nothing of its own waits. So the order is lws's own; write interest is never switched on
/// unless something is still left, and libev hands the kernel no change. A socket that is not
/// in fact writable loses nothing: lws keeps what the kernel does not take and asks for write
/// interest itself.
///
/// The same watcher tells the delegate, once, that the loop is about to wait
/// (`notifyBeforeWaiting`).
extension WebSocketServer {
    /// Queues `connection`'s first frame for a write turn before the loop waits again, if it
    /// can have one: on libev, for a frame its own message caused, with nothing else waiting.
    /// False: ask lws for a WRITEABLE callback instead.
    func takeWriteTurnBeforeWaiting(_ connection: ServerConnection) -> Bool {
        guard let eventLoop, let writeTurnWatcher, receiving === connection, connection.queue.count == 1,
              !connection.pingWanted, connection.closeAfterFlush == nil
        else { return false }
        if writeTurns.isEmpty { pev_prepare_start(eventLoop, writeTurnWatcher) }
        writeTurns.append(connection)
        return true
    }

    /// The prepare watcher's work: the write turns waiting, then the delegate's
    /// `serverWillWait()` if it is owed (`notifyBeforeWaiting`), then whatever that gathered.
    /// Both are done here, in one callback: libev would not run a prepare watcher started
    /// during its own prepare phase before it waits.
    func beforeWaiting() {
        guard let context else {
            stopWriteTurnWatcher()
            return
        }
        if !writeTurns.isEmpty { takeWriteTurns(context) }
        stopWriteTurnWatcher()
        // After the turns: a message read during one is among the events the delegate has seen.
        deliverWaitNotice()
        flushGathered()
    }

    /// The delegate's `serverWillWait()`, if it is owed.
    func deliverWaitNotice() {
        if waitNoticeOwed {
            waitNoticeOwed = false
            delegate?.serverWillWait()
        }
    }

    /// Each waiting connection's write turn, then WRITEABLE asked for whatever is still left
    /// (a frame lws's own pong went ahead of, or more frames).
    ///
    /// A turn can read: lws also drains rx it holds for the connection (flow control, a
    /// segment it buffered), and a message read then may queue a reply for a turn of its own,
    /// so turns are taken here until none is left.
    private func takeWriteTurns(_ context: OpaquePointer) {
        var serviced: [ServerConnection] = []
        while !writeTurns.isEmpty {
            let turns = writeTurns
            writeTurns = []
            for connection in turns where !connection.closed && !connection.closing {
                turnsTaken += 1
                _ = pws_service_writable(context, connection.wsi)
                // lws may have closed it (a failed write), and freed its wsi.
                guard !connection.closed else { continue }
                serviced.append(connection)
                if !connection.queue.isEmpty || connection.pingWanted || connection.closeAfterFlush != nil {
                    lws_callback_on_writable(connection.wsi)
                }
            }
        }
        // lws's libev glue follows each service with its idle pass (`lws_accept_cb` starts it):
        // rx held back by flow control, rx lws buffered, inflate to drain, its timers re-armed.
        // A turn taken here skips that pass, so when lws says a connection needs such forced
        // service, a WRITEABLE for the connections just serviced goes through the glue (rare:
        // it costs the two epoll_ctl a turn saves).
        if lws_service_adjust_timeout(context, 1, 0) == 0 {
            for connection in serviced where !connection.closed {
                lws_callback_on_writable(connection.wsi)
            }
        }
    }

    private func stopWriteTurnWatcher() {
        if let eventLoop, let writeTurnWatcher { pev_prepare_stop(eventLoop, writeTurnWatcher) }
    }

    /// Calls the delegate's `serverWillWait()` once before the loop next waits for events, however
    /// often this is asked meanwhile: work that only has to be done before the loop sleeps
    /// (the runtime arming its next wake-up) is then done once for all the events of a loop
    /// turn, not once per event. On libev the prepare watcher does it, which runs before every
    /// wait, whatever asked (an lws callback, a timer, the inbox).
    ///
    /// On lws's poll loop a timer due at once does it. One `lws_service` first runs the timers
    /// that are due (ours, and lws's own connection timeouts, which can close a connection),
    /// then takes the time to the next timer as `poll()`'s timeout, then polls: work done in
    /// those timers asks for the notice after the wait was last checked for, so a check before
    /// each `lws_service` would leave that `poll()` waiting without the deadline the notice
    /// arms. A timer scheduled while lws runs its due timers is due before that timeout is
    /// taken: lws runs it in the same pass, or polls with no wait (lws rounds the microseconds
    /// left down to milliseconds) and runs it at the start of the next service. Scheduled
    /// after the poll, it runs at the start of the next service, before lws computes the wait.
    public func notifyBeforeWaiting() {
        guard !waitNoticeOwed else { return }
        waitNoticeOwed = true
        if let eventLoop {
            // Started already when write turns wait: libev ignores a start of an active watcher.
            if let writeTurnWatcher { pev_prepare_start(eventLoop, writeTurnWatcher) }
        } else {
            waitNoticeTimer?.schedule(afterMilliseconds: 0)
        }
    }

    /// The prepare watcher, on libev; made with the loop's timers.
    func makeWriteTurnWatcher() {
        guard eventLoop != nil else { return }
        let watcher = UnsafeMutablePointer<pev_prepare>.allocate(capacity: 1)
        let callback: @convention(c) (UnsafeMutableRawPointer?) -> Void = { owner in
            guard let owner else { return }
            Unmanaged<WebSocketServer>.fromOpaque(owner).takeUnretainedValue().beforeWaiting()
        }
        pev_prepare_init(watcher, callback, Unmanaged.passUnretained(self).toOpaque())
        writeTurnWatcher = watcher
    }

    /// Stops and frees the watcher; before the loop goes away.
    func dropWriteTurnWatcher() {
        guard let writeTurnWatcher else { return }
        if let eventLoop { pev_prepare_stop(eventLoop, writeTurnWatcher) }
        writeTurnWatcher.deallocate()
        self.writeTurnWatcher = nil
    }
}
