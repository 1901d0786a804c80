// The two lws protocol callbacks. They run on the service thread only; each finds its
// server through the context's user pointer and its connection through the per-session
// data: the WebSocket protocol's holds the connection itself, the HTTP protocol's a number.
internal import CLibWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// `panes.v1`: the WebSocket protocol. lws calls it for more reasons than the server handles
/// (about six a resume, three of them not ours: binding the protocol, its headers, its
/// filter); those return at once, before the server is looked up.
func webSocketCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                       _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard WebSocketServer.handlesWebSocket(reason), let wsi else { return 0 }
    return WebSocketServer.with(wsi) { $0.handleWebSocket(wsi, reason, user, input, length) } ?? 0
}

/// Plain HTTP: `/healthz`, `/metrics`, the API path's requests, lws's own file serving, and the
/// upgrade's checks. Reasons the server does not handle go straight to lws's default handler.
func httpCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                  _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    if WebSocketServer.handlesHTTP(reason), let wsi,
       let result = WebSocketServer.with(wsi, { $0.handleHTTP(wsi, reason, user, input, length) }) ?? nil
    {
        return result
    }
    return lws_callback_http_dummy(wsi, reason, user, input, length)
}

extension WebSocketServer {
    /// The reasons `handleWebSocket` acts on; for any other it did nothing but return 0.
    static func handlesWebSocket(_ reason: lws_callback_reasons) -> Bool {
        switch reason {
        case LWS_CALLBACK_ESTABLISHED, LWS_CALLBACK_RECEIVE, LWS_CALLBACK_RECEIVE_PONG, LWS_CALLBACK_SERVER_WRITEABLE,
             LWS_CALLBACK_WS_PEER_INITIATED_CLOSE, LWS_CALLBACK_CLOSED, LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            true
        default:
            false
        }
    }

    /// Only WebSocket callbacks for the reasons `handlesWebSocket` names may come here: what the
    /// delegate sends meanwhile is written as it returns (`flushGathered`), and no other
    /// callback sends anything.
    func handleWebSocket(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        // What the delegate sent while handling this callback leaves as it returns.
        defer { flushGathered() }
        switch reason {
        case LWS_CALLBACK_ESTABLISHED:
            nextConnectionID += 1
            let id = nextConnectionID
            let now = Self.monotonicMilliseconds()
            let connection = ServerConnection(id: id, wsi: wsi, now: now)
            // Unretained: `connections` holds it until CLOSED, which clears this again.
            user?.storeBytes(of: Unmanaged.passUnretained(connection).toOpaque(), as: UnsafeMutableRawPointer?.self)
            // The handshake's headers are still there (lws frees them after this callback).
            let peer = client(of: wsi)
            // Read for the last time: an open WebSocket holds no slot (`AcceptedPeers`).
            acceptedPeers[lws_get_socket_fd(wsi)] = nil
            connections[id] = connection
            idle.heard(connection, at: now)
            armIdleTimer()
            // The peer is handed over with the news and not kept here: the delegate keeps it
            // (the hub's connection record), and 16 bytes less in `ServerConnection` takes it
            // from a 144-byte malloc chunk to a 128-byte one, in every idle scene.
            delegate?.serverDidOpen(id, peer: peer)

        case LWS_CALLBACK_RECEIVE:
            guard let connection = connection(user), !connection.closing else { return 0 }
            receive(connection, UnsafeRawBufferPointer(start: input, count: length))

        case LWS_CALLBACK_RECEIVE_PONG:
            if let connection = connection(user), !connection.closing {
                idle.heard(connection, at: Self.monotonicMilliseconds())
                armIdleTimer()
                delegate?.serverDidReceivePong(from: connection.id)
            }

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let connection = connection(user) else { return 0 }
            return writeNext(connection)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            guard let connection = connection(user) else { return 0 }
            connection.peerClosed = true
            // lws echoes the peer's close payload unless told otherwise; RFC 6455 §7.4 wants a
            // 1002 (or 1007) instead when that payload is invalid.
            if let violation = PeerClose.violation(UnsafeRawBufferPointer(start: input, count: length)) {
                setCloseReason(wsi, violation)
                return -1
            }

        case LWS_CALLBACK_CLOSED:
            // Before lws closes the descriptor, which the kernel may then give to the next accept.
            acceptedPeers[lws_get_socket_fd(wsi)] = nil
            guard let connection = connection(user) else { return 0 }
            user?.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            connection.closed = true
            connections[connection.id] = nil
            idle.forget(connection)
            closeEnded(connection)
            let deliberate = connection.peerClosed || connection.closing
            delegate?.serverDidClose(connection.id, abnormal: !deliberate)

        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainInbox()

        default:
            break
        }
        return 0
    }

    /// One piece of a data frame: a whole message, or part of one (a fragment, or a frame
    /// longer than lws's receive buffer, `receiveBufferBytes`). Refuses as early as the limits allow: a frame
    /// header announcing more than `maxMessageBytes` closes with 1009 at its first bytes, and
    /// bad UTF-8 closes with 1007 where it appears, before the rest is buffered.
    private func receive(_ connection: ServerConnection, _ piece: UnsafeRawBufferPointer) {
        let wsi = connection.wsi
        if !connection.readingPaused {
            idle.heard(connection, at: Self.monotonicMilliseconds())
            armIdleTimer()
        }
        if lws_frame_is_binary(wsi) != 0 {
            closeSoon(connection, code: 1003, reason: "binary frames are not part of the protocol")
            return
        }
        // What this message will be at least: what came before, this piece, and what the
        // current frame's header says is still to come.
        let announced = connection.inbound.count + piece.count + Int(clamping: lws_remaining_packet_payload(wsi))
        if announced > configuration.maxMessageBytes {
            closeSoon(connection, code: 1009, reason: "message over \(configuration.maxMessageBytes) bytes")
            return
        }
        let complete = pws_message_complete(wsi) != 0
        guard connection.utf8.accept(piece), !complete || connection.utf8.isAtBoundary else {
            closeSoon(connection, code: 1007, reason: "text that is not UTF-8")
            return
        }
        if complete && connection.inbound.isEmpty {
            // The common case: the whole message in one callback, no copy.
            connection.utf8.reset()
            receiving = connection
            delegate?.serverDidReceive(piece, from: connection.id)
            receiving = nil
            return
        }
        connection.inbound.append(contentsOf: piece)
        if complete {
            let message = connection.inbound
            connection.inbound = []
            connection.utf8.reset()
            receiving = connection
            message.withUnsafeBytes { delegate?.serverDidReceive($0, from: connection.id) }
            receiving = nil
        }
    }

    /// Writes one thing per WRITEABLE callback, as lws requires: a pending ping first, then
    /// the oldest frame; then asks for another callback while anything is left.
    private func writeNext(_ connection: ServerConnection) -> Int32 {
        if let close = connection.closeNow {
            return startClose(connection, close)
        }
        if connection.pingWanted {
            connection.pingWanted = false
            // lws only reports pongs that carry a payload (an empty one is dropped before the
            // callback), so the ping carries one for the peer to echo.
            var ping = [UInt8](repeating: 0, count: OutboundFrame.headroom) + Array("panes".utf8)
            let written = ping.withUnsafeMutableBufferPointer {
                lws_write(connection.wsi, $0.baseAddress! + OutboundFrame.headroom, 5, LWS_WRITE_PING)
            }
            if written < 0 { return -1 }
        } else if let frame = connection.queue.pop() {
            let written = lws_write(connection.wsi, frame.payload, frame.payloadCount,
                                    frame.binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT)
            if written < frame.payloadCount { return -1 }
        } else if let close = connection.closeAfterFlush {
            return startClose(connection, close)
        }
        if !connection.queue.isEmpty || connection.pingWanted || connection.closeAfterFlush != nil {
            lws_callback_on_writable(connection.wsi)
        }
        return 0
    }

    /// The close frame lws sends when the callback then returns -1.
    func setCloseReason(_ wsi: OpaquePointer, _ close: (code: UInt16, reason: String)) {
        var reason = Array(close.reason.utf8.prefix(120))
        reason.withUnsafeMutableBufferPointer { buffer in
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(close.code)), buffer.baseAddress, buffer.count)
        }
    }

    /// The connection a WebSocket callback is for, read from its per-session data rather than
    /// looked up in `connections` (a hash per callback, several a resume; issue 27). lws zeroes
    /// that data when it binds the protocol, so before ESTABLISHED and after CLOSED it is nil.
    private func connection(_ user: UnsafeMutableRawPointer?) -> ServerConnection? {
        guard let pointer = user?.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<ServerConnection>.fromOpaque(pointer).takeUnretainedValue()
    }
}
