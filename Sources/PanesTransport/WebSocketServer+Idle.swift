internal import CLibWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// Finding dead peers: a connection silent for `idlePingMilliseconds` is pinged; one still
/// silent after twice that is closed. A peer that crashed or lost its network never sends a
/// FIN, so without this its scene would look live forever.
extension WebSocketServer {
    /// Runs from the tick, but looks at the connections only a few times a minute: the
    /// deadlines are tens of seconds, so a coarse sweep is exact enough and costs O(n) rarely.
    func sweepIdle() {
        let now = monotonicMilliseconds()
        let interval = UInt64(max(configuration.idlePingMilliseconds / 4, configuration.tickMilliseconds))
        guard now >= lastIdleSweep + interval else { return }
        lastIdleSweep = now
        let pingAfter = UInt64(configuration.idlePingMilliseconds)
        for connection in connections.values where !connection.closing {
            let silent = now - connection.lastHeard
            if silent >= 2 * pingAfter {
                connection.queue.removeAll()
                connection.closeNow = (configuration.unresponsiveCloseCode, "no answer to pings")
                lws_callback_on_writable(connection.wsi)
            } else if silent >= pingAfter && !connection.idlePinged {
                connection.idlePinged = true
                ping(connection.id)
            }
        }
    }
}

/// Milliseconds from an arbitrary start that never jumps with the wall clock.
func monotonicMilliseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
}
