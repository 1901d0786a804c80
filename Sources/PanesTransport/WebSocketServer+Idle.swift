internal import CLibWebSockets
import Logging

/// What the idle detector's timer does when a deadline comes: ping the silent, close the
/// unresponsive, drop the connections whose close never finished; then set the timer for
/// the next deadline. See `IdleDetector`.
extension WebSocketServer {
    func expireIdle() {
        let expired = idle.expire(at: Self.monotonicMilliseconds())
        for connection in expired.ping {
            ping(connection.id)
        }
        for connection in expired.unresponsive {
            closeSoon(connection, code: configuration.unresponsiveCloseCode, reason: "no answer to pings")
        }
        for connection in expired.stuck {
            configuration.logger.notice("dropping a connection whose close never completed",
                                        metadata: ["connection": "\(connection.id)"])
            pws_drop_now(connection.wsi)
        }
        armIdleTimer()
    }
}
