// The two lws protocol callbacks. They run on the service thread only; each finds its
// server through the context's user pointer and its connection through the per-session
// data, which holds the connection's number.
internal import CLibWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// `panes.v1`: the WebSocket protocol.
func webSocketCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                       _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let server = WebSocketServer.from(wsi) else { return 0 }
    return server.handleWebSocket(wsi, reason, user, input, length)
}

/// Plain HTTP: `/healthz`, `/metrics`, and lws's own file serving for everything else.
func httpCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                  _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    if let wsi, let server = WebSocketServer.from(wsi),
       let result = server.handleHTTP(wsi, reason, user, input, length)
    {
        return result
    }
    return lws_callback_http_dummy(wsi, reason, user, input, length)
}

extension WebSocketServer {
    func handleWebSocket(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return acceptsUpgrade(wsi) ? 0 : 1

        case LWS_CALLBACK_ESTABLISHED:
            nextConnectionID += 1
            let id = nextConnectionID
            user?.storeBytes(of: id, as: UInt64.self)
            connections[id] = ServerConnection(id: id, wsi: wsi, now: monotonicMilliseconds())
            delegate?.serverDidOpen(id)

        case LWS_CALLBACK_RECEIVE:
            guard let connection = connection(user), !connection.closing else { return 0 }
            connection.heard(at: monotonicMilliseconds())
            if lws_frame_is_binary(wsi) != 0 {
                closeSoon(connection, code: 1003, reason: "binary frames are not part of the protocol")
                return 0
            }
            if connection.inbound.count + length > configuration.maxMessageBytes {
                connection.inbound = []
                closeSoon(connection, code: 1009, reason: "message over \(configuration.maxMessageBytes) bytes")
                return 0
            }
            let complete = pws_message_complete(wsi) != 0
            if complete && connection.inbound.isEmpty {
                // The common case: the whole message in one callback, no copy.
                delegate?.serverDidReceive(UnsafeRawBufferPointer(start: input, count: length), from: connection.id)
            } else {
                if let input { connection.inbound.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length)) }
                if complete {
                    let message = connection.inbound
                    connection.inbound = []
                    message.withUnsafeBytes { delegate?.serverDidReceive($0, from: connection.id) }
                }
            }

        case LWS_CALLBACK_RECEIVE_PONG:
            if let connection = connection(user) {
                connection.heard(at: monotonicMilliseconds())
                delegate?.serverDidReceivePong(from: connection.id)
            }

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let connection = connection(user) else { return 0 }
            return writeNext(connection)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            connection(user)?.peerClosed = true

        case LWS_CALLBACK_CLOSED:
            guard let connection = connection(user) else { return 0 }
            connections[connection.id] = nil
            let deliberate = connection.peerClosed || connection.closing
            delegate?.serverDidClose(connection.id, abnormal: !deliberate)

        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainInbox()

        default:
            break
        }
        return 0
    }

    /// Writes one thing per WRITEABLE callback, as lws requires: a pending ping first, then
    /// the oldest frame; then asks for another callback while anything is left.
    private func writeNext(_ connection: ServerConnection) -> Int32 {
        if let close = connection.closeNow {
            return closeWith(connection, close)
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
            return closeWith(connection, close)
        }
        if !connection.queue.isEmpty || connection.pingWanted || connection.closeAfterFlush != nil {
            lws_callback_on_writable(connection.wsi)
        }
        return 0
    }

    private func closeWith(_ connection: ServerConnection, _ close: (code: UInt16, reason: String)) -> Int32 {
        var reason = Array(close.reason.utf8.prefix(120))
        reason.withUnsafeMutableBufferPointer { buffer in
            lws_close_reason(connection.wsi, lws_close_status(rawValue: UInt32(close.code)), buffer.baseAddress, buffer.count)
        }
        return -1
    }

    /// Closing from inside RECEIVE breaks permessage-deflate's state, so the close is done
    /// from the next WRITEABLE callback instead.
    private func closeSoon(_ connection: ServerConnection, code: UInt16, reason: String) {
        connection.queue.removeAll()
        connection.closeNow = (code, reason)
        lws_callback_on_writable(connection.wsi)
    }

    private func connection(_ user: UnsafeMutableRawPointer?) -> ServerConnection? {
        guard let user else { return nil }
        return connections[user.load(as: UInt64.self)]
    }

    /// Only `webSocketPath`, only allowed origins, and only while not draining.
    private func acceptsUpgrade(_ wsi: OpaquePointer) -> Bool {
        guard acceptingConnections else { return false }
        guard header(wsi, WSI_TOKEN_GET_URI) == configuration.webSocketPath else { return false }
        return configuration.origins.allows(origin: header(wsi, WSI_TOKEN_ORIGIN), host: header(wsi, WSI_TOKEN_HOST))
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = Int(lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token))
        guard copied >= 0 else { return nil }
        return String(decoding: buffer.prefix(copied).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: HTTP

    /// Returns nil to let lws's default handler take the callback.
    func handleHTTP(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                    _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32? {
        switch reason {
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            // A WebSocket upgrade without our subprotocol lands on the default protocol: refuse it.
            return 1
        case LWS_CALLBACK_HTTP:
            let path = header(wsi, WSI_TOKEN_GET_URI) ?? "/"
            let response = delegate?.serverHTTPResponse(for: path)
                ?? HTTPResponse(status: 404, body: "not found\n")
            nextConnectionID += 1
            let id = nextConnectionID
            user?.storeBytes(of: id, as: UInt64.self)
            httpResponses[id] = response
            var headers = [UInt8](repeating: 0, count: OutboundFrame.headroom + 1024)
            let failed = headers.withUnsafeMutableBufferPointer { buffer -> Bool in
                let start = buffer.baseAddress! + OutboundFrame.headroom
                var cursor: UnsafeMutablePointer<UInt8>? = start
                let end = buffer.baseAddress! + buffer.count
                return lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType,
                                                   lws_filepos_t(response.body.count), &cursor, end) != 0
                    || lws_finalize_write_http_header(wsi, start, &cursor, end) != 0
            }
            if failed { return 1 }
            lws_callback_on_writable(wsi)
            return 0
        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let id = user?.load(as: UInt64.self), let response = httpResponses.removeValue(forKey: id) else {
                return nil
            }
            var body = [UInt8](repeating: 0, count: OutboundFrame.headroom) + response.body
            let count = response.body.count
            let written = body.withUnsafeMutableBufferPointer {
                lws_write(wsi, $0.baseAddress! + OutboundFrame.headroom, count, LWS_WRITE_HTTP_FINAL)
            }
            if written < count { return -1 }
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        case LWS_CALLBACK_CLOSED_HTTP:
            if let id = user?.load(as: UInt64.self) { httpResponses[id] = nil }
            return nil
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            // Delivered to every protocol; the WebSocket protocol drains the inbox.
            return 0
        default:
            return nil
        }
    }
}
