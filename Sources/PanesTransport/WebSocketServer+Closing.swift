// Threading: the service thread's, like every other write and every lws callback.
internal import CLibWebSockets

/// Closing many connections at once without paying for it in their square.
///
/// When a WRITEABLE callback returns -1 after `lws_close_reason`, lws sends the close frame and
/// waits for the peer's, with a timeout for each step (`PENDING_TIMEOUT_CLOSE_SEND`, then
/// `_CLOSE_ACK`). lws 4.1 keeps all of a thread's timeouts in one list sorted by when they
/// fall due, inserted by a walk from its head; every new close falls due after all the others,
/// so each walks the whole list. A drain closes every connection at once: at 10,000 the
/// walks were most of its 4.5 s (time that grows with the square of the connections).
///
/// So at most `maxClosingHandshakes` connections are in their close handshake at a time; the
/// others wait here, in the order they were closed, and each close that ends (the peer
/// answered, or lws gave up on it, or the socket dropped) lets the next one start. Everything a
/// waiting connection was sent before its close has been written; it is only its close frame
/// that waits.
///
/// When a close ends, lws shuts the socket's writing side and closes the descriptor at once (its
/// staged close, which waits for the peer's end, is unreachable in 4.1.6: it marks the socket
/// unusable just before testing that mark). A peer that is still sending then has data arriving
/// on a closed socket, and the kernel resets the connection, dropping whatever it had not
/// delivered, the close frame included: such a peer sees 1006, not the code chosen here (a 4008
/// peer reading slowly and sending 512 KiB messages saw 4008 or a reset depending on timing;
/// a quiet one always saw 4008, even reading 8 s later). Avoiding it takes a lingering close
/// (keep a duplicate of the descriptor past LWS_CALLBACK_CLOSED, read and discard until the
/// peer's end or a deadline), which is not done; PROTOCOL.md says what a client sees.
extension WebSocketServer {
    /// Begins the close handshake of a connection whose queue is written, or puts it in line.
    /// The WRITEABLE callback returns what this returns.
    func startClose(_ connection: ServerConnection, _ close: (code: UInt16, reason: String)) -> Int32 {
        if !connection.closeStarted {
            guard closingHandshakes < configuration.maxClosingHandshakes else {
                if !connection.waitingToClose {
                    connection.waitingToClose = true
                    closesWaiting.append(connection)
                }
                return 0
            }
            connection.closeStarted = true
            connection.waitingToClose = false
            closingHandshakes += 1
            closingHandshakesPeak = max(closingHandshakesPeak, closingHandshakes)
        }
        setCloseReason(connection.wsi, close)
        return -1
    }

    /// A connection is gone: if it was closing, the next one in line may start.
    func closeEnded(_ connection: ServerConnection) {
        connection.waitingToClose = false
        guard connection.closeStarted else { return }
        closingHandshakes -= 1
        while closesWaitingHead < closesWaiting.count {
            let next = closesWaiting[closesWaitingHead]
            closesWaitingHead += 1
            // Gone meanwhile (the peer closed first): its turn goes to the one after it.
            guard next.waitingToClose, !next.closed else { continue }
            next.waitingToClose = false
            lws_callback_on_writable(next.wsi)
            break
        }
        if closesWaitingHead == closesWaiting.count {
            closesWaiting.removeAll(keepingCapacity: closesWaiting.capacity <= 1024)
            closesWaitingHead = 0
        }
    }
}
