// HTTP on the service thread: the checks every request and every WebSocket upgrade pass
// (path, draining, Host, Origin, subprotocol), refusals with a status and a logged reason,
// and the small dynamic responses (`/healthz`, `/metrics`). Files are served by lws itself.
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
            // Every plain HTTP request, files included, before anything is served.
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
        guard Self.offers(header(wsi, WSI_TOKEN_PROTOCOL) ?? "", configuration.subprotocol) else {
            return (400, "the subprotocol \(configuration.subprotocol) was not offered")
        }
        return nil
    }

    /// Whether a `Sec-WebSocket-Protocol` list names `subprotocol`: its comma-separated items,
    /// spaces and tabs taken out. An all-ASCII header (every browser's) is read byte by byte,
    /// where every character is one byte; anything else character by character.
    static func offers(_ header: String, _ subprotocol: String) -> Bool {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        if header.utf8.allSatisfy({ $0 < 0x80 }) {
            return header.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).contains {
                $0.lazy.filter { !isSpace($0) }.elementsEqual(subprotocol.utf8)
            }
        }
        return header.split(separator: ",").contains { String($0.filter { $0 != " " && $0 != "\t" }) == subprotocol }
    }

    /// Answers with `status` and a one-line body, and logs why with what the request said.
    private func refuse(_ wsi: OpaquePointer, status: Int, detail: String) {
        configuration.logger.warning("refused an HTTP request", metadata: [
            "status": "\(status)", "reason": "\(detail)", "path": "\(header(wsi, WSI_TOKEN_GET_URI) ?? "")",
            "origin": "\(header(wsi, WSI_TOKEN_ORIGIN) ?? "-")", "host": "\(header(wsi, WSI_TOKEN_HOST) ?? "-")",
            "peer": "\(peerAddress(wsi))",
        ])
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

    /// A request header's value; nil when absent, "" when present but empty (an empty
    /// `Origin` is refused, a missing one is not).
    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else {
            var probe: CChar = 0
            return lws_hdr_copy_fragment(wsi, &probe, 1, token, 0) == 0 ? "" : nil
        }
        // Copied straight into the string's own storage (lws adds a NUL, hence the extra byte);
        // bytes that are not UTF-8 are replaced, as `String(decoding:)` does.
        var failed = false
        let value = String(unsafeUninitializedCapacity: length + 1) { buffer in
            let copied = buffer.withMemoryRebound(to: CChar.self) {
                Int(lws_hdr_copy(wsi, $0.baseAddress, Int32($0.count), token))
            }
            failed = copied < 0
            return max(copied, 0)
        }
        return failed ? nil : value
    }

    private func peerAddress(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
