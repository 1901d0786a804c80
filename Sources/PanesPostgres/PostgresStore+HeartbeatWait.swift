// Threading: called by the heartbeat thread, which owns the heartbeat's own store;
// `interruptHeartbeatWait` from any thread.
import Dispatch
import Glibc

/// The heartbeat's wait between renewals, on its connection (`ClusterNode`).
extension PostgresStore {
    /// Waits on the heartbeat's connection (`SharedStore.awaitHeartbeatConnection`): a
    /// terminated backend, a server restart or a dropped socket makes it readable (its last
    /// message, then the end of the stream) at once, where the next heartbeat would find out a
    /// beat later. A connection already lost is waited on no further (its loss was reported).
    ///
    /// A terminated backend first sends its error, then closes: the wait goes on after a
    /// message that leaves the connection up, until the end of the stream or of the time.
    public func awaitHeartbeatConnection(timeoutMs: Int) -> Bool? {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeoutMs)) * 1_000_000
        while true {
            var descriptors = [pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
            if connection.isConnected {
                descriptors.append(pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0))
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return false }
            let leftMs = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            let ready = poll(&descriptors, nfds_t(descriptors.count), leftMs)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return false }
            if descriptors[0].revents != 0 {
                wake.drain()
                return false
            }
            if descriptors.count > 1 && descriptors[1].revents != 0 && !connection.isAliveAfterReading() { return true }
        }
    }

    public func interruptHeartbeatWait() {
        wake.signal()
    }
}
