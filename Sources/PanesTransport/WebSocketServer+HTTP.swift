// HTTP on the service thread: the checks every request and every WebSocket upgrade pass
// (path, draining, Host, Origin, subprotocol) and refusals with a status and a logged reason.
// Requests themselves are read in `WebSocketServer+HTTPRequest.swift` and answered in
// `WebSocketServer+HTTPResponse.swift` (which says why answers are not written from lws's
// WRITEABLE callbacks). Files are served by lws itself.
internal import CLibWebSockets
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension WebSocketServer {
    /// Returns nil to let lws's default handler take the callback.
    func handleHTTP(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                    _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32? {
        switch reason {
        case LWS_CALLBACK_FILTER_HTTP_CONNECTION:
            // Every plain HTTP request, files included, before anything is served. API requests
            // are checked when they begin, so a refusal can carry the API's error object.
            if let path = requestLine(wsi)?.path, isAPIPath(path) { return 0 }
            if let refusal = originPolicy.refusal(origin: header(wsi, WSI_TOKEN_ORIGIN), host: header(wsi, WSI_TOKEN_HOST)) {
                refuse(wsi, status: 403, detail: refusal)
                return 1
            }
            return 0
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            // Every upgrade, before lws answers it. Returning 1 after writing a response is how
            // lws lets a server refuse with a status rather than a silent close.
            if let (status, detail) = upgradeRefusal(wsi, to: input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }) {
                refuse(wsi, status: status, detail: detail)
                return 1
            }
            return 0
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            // An upgrade that reached the plain HTTP protocol named no subprotocol of ours;
            // `upgradeRefusal` already answered those, so this only guards.
            return 1
        case LWS_CALLBACK_HTTP:
            // What the delegate sent to WebSocket connections meanwhile leaves as this returns.
            defer { flushGathered() }
            return beginHTTPRequest(wsi, user)
        case LWS_CALLBACK_HTTP_BODY:
            return receiveHTTPBody(user, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)) ? 0 : -1
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            defer { flushGathered() }
            return completeHTTPBody(user) ? 0 : -1
        case LWS_CALLBACK_CLOSED_HTTP:
            if let exchange = httpExchange(user) { httpExchangeClosed(exchange) }
            return nil
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            // Delivered to every protocol; the WebSocket protocol drains the inbox.
            return 0
        default:
            return nil
        }
    }

    /// Why an upgrade may not proceed: the status to answer with and the reason to log.
    private func upgradeRefusal(_ wsi: OpaquePointer, to upgrade: String?) -> (Int, String)? {
        let path = header(wsi, WSI_TOKEN_GET_URI) ?? ""
        guard upgrade?.lowercased() == "websocket", path == configuration.webSocketPath else {
            return (404, "only \(configuration.webSocketPath) upgrades, and only to a WebSocket")
        }
        if let refusal = originPolicy.refusal(origin: header(wsi, WSI_TOKEN_ORIGIN), host: header(wsi, WSI_TOKEN_HOST)) {
            return (403, refusal)
        }
        guard acceptingConnections else { return (503, "the server is draining") }
        let offered = (header(wsi, WSI_TOKEN_PROTOCOL) ?? "").split(separator: ",").map {
            String($0.filter { $0 != " " && $0 != "\t" })
        }
        guard offered.contains(configuration.subprotocol) else {
            return (400, "the subprotocol \(configuration.subprotocol) was not offered")
        }
        return nil
    }

    /// Answers with `status` and a one-line body, and logs why with what the request said.
    private func refuse(_ wsi: OpaquePointer, status: Int, detail: String) {
        logRefusal(wsi, status: status, detail: detail)
        let (phrase, body) = switch status {
        case 400: ("Bad Request", "400 Bad Request: \(detail)\n")
        case 403: ("Forbidden", "403 Forbidden: this origin or host name is not allowed\n")
        case 404: ("Not Found", "404 Not Found\n")
        case 503: ("Service Unavailable", "503 Service Unavailable: the server is draining\n")
        default: ("Error", "\(status)\n")
        }
        // Written whole rather than through lws's header helpers: before an upgrade is
        // accepted lws has not recorded the request's HTTP version and would answer HTTP/1.0,
        // which WebSocket clients reject as malformed.
        let response = "HTTP/1.1 \(status) \(phrase)\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + "content-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n\(body)"
        var bytes = [UInt8](repeating: 0, count: OutboundFrame.headroom) + Array(response.utf8)
        let count = bytes.count - OutboundFrame.headroom
        _ = bytes.withUnsafeMutableBufferPointer {
            lws_write(wsi, $0.baseAddress! + OutboundFrame.headroom, count, LWS_WRITE_HTTP)
        }
    }

    /// The log line of every refusal: the status, why, and what the request said.
    func logRefusal(_ wsi: OpaquePointer, status: Int, detail: String) {
        configuration.logger.warning("refused an HTTP request", metadata: [
            "status": "\(status)", "reason": "\(detail)",
            "path": "\(requestLine(wsi).map { String(decoding: $0.path, as: UTF8.self) } ?? "")",
            "origin": "\(header(wsi, WSI_TOKEN_ORIGIN) ?? "-")", "host": "\(header(wsi, WSI_TOKEN_HOST) ?? "-")",
            "peer": "\(peerAddress(wsi))",
        ])
    }

    /// A request header's value; nil when absent, "" when present but empty (an empty
    /// `Origin` is refused, a missing one is not).
    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        headerBytes(wsi, token).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A request header's bytes as sent (lws joins a repeated header's values with a space).
    func headerBytes(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> [UInt8]? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else {
            var probe: CChar = 0
            return lws_hdr_copy_fragment(wsi, &probe, 1, token, 0) == 0 ? [] : nil
        }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = Int(lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token))
        guard copied >= 0 else { return nil }
        return buffer.prefix(copied).map { UInt8(bitPattern: $0) }
    }

    func peerAddress(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
