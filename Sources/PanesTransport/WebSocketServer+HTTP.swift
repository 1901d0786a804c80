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
    /// The reasons `handleHTTP` may act on; for any other it returned nil.
    static func handlesHTTP(_ reason: lws_callback_reasons) -> Bool {
        switch reason {
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION, LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED,
             LWS_CALLBACK_FILTER_HTTP_CONNECTION, LWS_CALLBACK_HTTP_CONFIRM_UPGRADE, LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION,
             LWS_CALLBACK_HTTP, LWS_CALLBACK_HTTP_BODY, LWS_CALLBACK_HTTP_BODY_COMPLETION, LWS_CALLBACK_CLOSED_HTTP,
             LWS_CALLBACK_RAW_ADOPT, LWS_CALLBACK_WSI_DESTROY, LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            true
        default:
            false
        }
    }

    /// Returns nil to let lws's default handler take the callback.
    func handleHTTP(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                    _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32? {
        switch reason {
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            // Every accepted TCP connection, before lws reads a byte of it (`user` holds the
            // peer's address, `input` the accepted descriptor). Nonzero closes it.
            return closesAtAccept(user, descriptor: Int32(truncatingIfNeeded: Int(bitPattern: input))) ? 1 : 0
        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            // lws made a connection of the socket the filter just saw (one it cannot take it
            // closes with no callback at all): only now does its slot hold the key noted, and
            // does it count as sending its headers.
            let descriptor = lws_get_socket_fd(wsi)
            acceptedPeers.adopted(descriptor)
            adoptedForUnfinishedHeaders(wsi, descriptor)
            return nil
        case LWS_CALLBACK_FILTER_HTTP_CONNECTION:
            // Every plain HTTP request, files included, before anything is served. API requests
            // are checked when they begin, so a refusal can carry the API's error object. It
            // still counts as sending headers: see `LWS_CALLBACK_HTTP`.
            if let path = requestLine(wsi)?.path, isAPIPath(path) { return 0 }
            if let refusal = originPolicy.refusal(origin: header(wsi, WSI_TOKEN_ORIGIN), host: header(wsi, WSI_TOKEN_HOST)) {
                refuse(wsi, status: 403, detail: refusal)
                return 1
            }
            return 0
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            // Every upgrade, before lws answers it. Returning 1 after writing a response is how
            // lws lets a server refuse with a status rather than a silent close.
            let upgrade = input.map { UnsafeRawBufferPointer(start: $0, count: strlen($0.assumingMemoryBound(to: CChar.self))) }
            let descriptor = lws_get_socket_fd(wsi)
            if let refusal = upgradeRefusal(wsi, to: upgrade) {
                // Still counted as sending headers (`unfinishedHeaders`): lws closes it after the
                // answer, or reads its next request (kept alive by an earlier one).
                refuse(wsi, status: refusal.status, detail: refusal.detail, retryAfterSeconds: refusal.retryAfterSeconds)
                // lws reports no close for a connection refused here (it never counted as
                // established), so its slot is emptied now; were the connection kept for another
                // request, that one would ask the socket.
                acceptedPeers[descriptor] = nil
                return 1
            }
            // Its headers are whole: it no longer counts as sending them.
            unfinishedHeaders.finished(descriptor)
            return 0
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            // An upgrade that reached the plain HTTP protocol named no subprotocol of ours;
            // `upgradeRefusal` already answered those, so this only guards.
            return 1
        case LWS_CALLBACK_HTTP:
            // Panes takes it: it stops counting as sending headers (not at the filter: see
            // `readingHeadersAgain`), and counts again once the answer is out.
            unfinishedHeaders.finished(lws_get_socket_fd(wsi))
            // What the delegate sent to WebSocket connections meanwhile leaves as this returns.
            defer { flushGathered() }
            return beginHTTPRequest(wsi, user)
        case LWS_CALLBACK_HTTP_BODY:
            return receiveHTTPBody(user, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)) ? 0 : -1
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            defer { flushGathered() }
            return completeHTTPBody(user) ? 0 : -1
        case LWS_CALLBACK_CLOSED_HTTP:
            // Before lws closes the descriptor, which the kernel may then give to the next accept.
            let descriptor = lws_get_socket_fd(wsi)
            unfinishedHeaders.finished(descriptor)
            acceptedPeers[descriptor] = nil
            if let exchange = httpExchange(user) { httpExchangeClosed(exchange) }
            return nil
        case LWS_CALLBACK_RAW_ADOPT:
            return refuseRawSocket(wsi)
        case LWS_CALLBACK_WSI_DESTROY:
            // Every connection's last callback, WebSockets' too (which set no opaque data, so
            // nothing happens for them), its descriptor closed (see `unfinishedHeadersDestroyed`).
            unfinishedHeadersDestroyed(wsi)
            return nil
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            // Delivered to every protocol; the WebSocket protocol drains the inbox.
            return 0
        default:
            return nil
        }
    }

    /// lws turns a `CONNECT` request into a raw socket on this protocol, with no timeout and
    /// past every check of the upgrade; Panes serves no raw sockets, so -1 has lws close it
    /// (which also gives back its place among connections sending headers).
    private func refuseRawSocket(_ wsi: OpaquePointer) -> Int32 {
        configuration.logger.debug("closed a connection lws made raw (a CONNECT request)", metadata: ["peer": "\(peerAddress(wsi))"])
        return -1
    }

    /// Whether a connection just accepted is closed unread: its address failed to authenticate
    /// too often and was already told when to come back (`serverClosesAtAccept`). A trusted
    /// proxy's address stands for many clients, whose own addresses are in headers not read
    /// yet, so its connections always go on to the checks of the upgrade. The address is kept
    /// for those checks (`acceptedPeers`). Past a cap on connections still sending their headers
    /// (`unfinishedHeaders`) it is closed too.
    private func closesAtAccept(_ user: UnsafeMutableRawPointer?, descriptor: Int32) -> Bool {
        guard let user else {
            // No address to note: the descriptor's slot is left empty, and the upgrade asks the socket.
            acceptedPeers.accepting(descriptor, key: nil)
            return closesForUnfinishedHeaders(descriptor, key: nil)
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { buffer in
            closesAccepted(descriptor: descriptor,
                           address: UnsafeRawBufferPointer(start: buffer.baseAddress, count: pws_filtered_address(user, buffer.baseAddress)))
        }
    }

    /// `closesAtAccept` for the descriptor lws accepted and its peer's address as the socket
    /// gives it (4 or 16 bytes; none for a socket that is not an IP one).
    func closesAccepted(descriptor: Int32, address: UnsafeRawBufferPointer) -> Bool {
        // The same key the upgrade's checks use (`client(of:)`): an IPv6 peer counts by its /64.
        let key = PeerAddress.key(address: address)
        acceptedPeers.accepting(descriptor, key: key)
        // Closed: lws closes the descriptor at once, with no connection, so it gets no slot.
        guard let key, !configuration.trustedProxies.contains(key) else {
            // A trusted proxy's connections count in the total only.
            return closesForUnfinishedHeaders(descriptor, key: nil)
        }
        if let delegate, delegate.serverClosesAtAccept(peer: key) { return true }
        return closesForUnfinishedHeaders(descriptor, key: key)
    }

    /// Why an upgrade may not proceed: the status to answer with, the reason to log, and for a
    /// 429 when to come back. Every window of a reconnect storm comes through here, so headers
    /// are compared as the bytes lws holds, copied to the stack, not made into strings.
    /// - Parameter upgrade: the `Upgrade` header lws read.
    private func upgradeRefusal(_ wsi: OpaquePointer, to upgrade: UnsafeRawBufferPointer?)
        -> (status: Int, detail: String, retryAfterSeconds: Int?)? {
        let toWebSocket = upgrade.map { Self.equalsIgnoringASCIICase($0, "websocket") } ?? false
        guard toWebSocket, withHeader(wsi, WSI_TOKEN_GET_URI, { $0.map { Self.same($0, webSocketPathBytes) } ?? false }) else {
            return (404, "only \(configuration.webSocketPath) upgrades, and only to a WebSocket", nil)
        }
        if !originAllowedAsSpelled(wsi),
           let refusal = originPolicy.refusal(origin: header(wsi, WSI_TOKEN_ORIGIN), host: header(wsi, WSI_TOKEN_HOST)) {
            return (403, refusal, nil)
        }
        if let refusing = refusingConnections { return (503, refusing, 1) }
        // An address whose tokens keep failing is turned away here, before the handshake, the
        // frame and its JSON cost anything; once told, its later attempts are closed at accept
        // (`closesAtAccept`) and never get this far.
        if let retryAfter = delegate?.serverRetryAfter(forPeer: client(of: wsi)) {
            let seconds = (retryAfter + 999) / 1_000
            return (429, "too many failed authentications from this address; retry in \(seconds) s", seconds)
        }
        guard withHeader(wsi, WSI_TOKEN_PROTOCOL, { Self.offers($0 ?? UnsafeRawBufferPointer(start: nil, count: 0), subprotocolBytes) }) else {
            return (400, "the subprotocol \(configuration.subprotocol) was not offered", nil)
        }
        return nil
    }

    /// Whether `Host` and `Origin` (or its absence) are spelled exactly as the policy allows
    /// them (`OriginPolicy.allowsAsSpelled`), as browsers and clients send them; anything else
    /// takes `OriginPolicy.refusal`'s full check.
    private func originAllowedAsSpelled(_ wsi: OpaquePointer) -> Bool {
        withHeader(wsi, WSI_TOKEN_HOST) { host in
            guard let host else { return false }
            return withHeader(wsi, WSI_TOKEN_ORIGIN) { originPolicy.allowsAsSpelled(origin: $0, host: host) }
        }
    }

    /// Whether a `Sec-WebSocket-Protocol` list names `subprotocol`: its comma-separated items,
    /// spaces and tabs taken out, compared by their bytes (commas, spaces and tabs are single
    /// bytes that never occur inside another character's UTF-8).
    static func offers(_ header: UnsafeRawBufferPointer, _ subprotocol: [UInt8]) -> Bool {
        // The usual offer, the name alone, compared whole (a name with none of the bytes the
        // items are split and trimmed at reads the same either way): the walk below was ~290
        // instructions a resume.
        // An empty name is never offered (an empty item is not an offer), as the walk says.
        if !subprotocol.isEmpty, header.count == subprotocol.count,
           !subprotocol.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }),
           same(header, subprotocol) {
            return true
        }
        var start = 0
        while start < header.count {
            var end = start
            while end < header.count && header[end] != UInt8(ascii: ",") { end += 1 }
            // The item's bytes other than spaces and tabs, matched against the name as they come.
            var matched = 0
            var differs = false
            for byte in header[start..<end] where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") {
                guard matched < subprotocol.count, subprotocol[matched] == byte else {
                    differs = true
                    break
                }
                matched += 1
            }
            if end > start && !differs && matched == subprotocol.count { return true }
            start = end + 1
        }
        return false
    }

    /// Whether `bytes` are `word` (lower-case ASCII) in any ASCII case, as HTTP compares tokens.
    static func equalsIgnoringASCIICase(_ bytes: UnsafeRawBufferPointer, _ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for index in 0..<bytes.count {
            let byte = bytes[index]
            let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            if lower != expected[index] { return false }
        }
        return true
    }

    /// Whether two byte strings are the same bytes.
    static func same(_ bytes: UnsafeRawBufferPointer, _ other: [UInt8]) -> Bool {
        guard bytes.count == other.count else { return false }
        guard let base = bytes.baseAddress, !other.isEmpty else { return true }
        return other.withUnsafeBytes { memcmp(base, $0.baseAddress!, bytes.count) == 0 }
    }

    /// The client a connection counts as (`PeerAddress.client`): read at the upgrade, while the
    /// request's headers are there. The socket's peer is the one noted at accept
    /// (`acceptedPeers`); `X-Forwarded-For` is read only when that peer is a trusted proxy.
    func client(of wsi: OpaquePointer) -> String {
        let peer: String
        if let noted = acceptedPeers[lws_get_socket_fd(wsi)] {
            peer = noted
        } else {
            let address = peerAddress(wsi)  // asked once: a getpeername and a format
            peer = PeerAddress.normalized(address) ?? address
        }
        guard configuration.trustedProxies.contains(peer) else { return peer }
        return PeerAddress.client(socketPeer: peer, forwardedFor: header(wsi, WSI_TOKEN_X_FORWARDED_FOR),
                                  trustedProxies: configuration.trustedProxies)
    }

    /// Answers with `status` and a one-line body, and logs why with what the request said.
    private func refuse(_ wsi: OpaquePointer, status: Int, detail: String, retryAfterSeconds: Int? = nil) {
        logRefusal(wsi, status: status, detail: detail)
        let (phrase, body) = switch status {
        case 400: ("Bad Request", "400 Bad Request: \(detail)\n")
        case 403: ("Forbidden", "403 Forbidden: this origin or host name is not allowed\n")
        case 404: ("Not Found", "404 Not Found\n")
        case 429: ("Too Many Requests", "429 Too Many Requests: \(detail)\n")
        case 503: ("Service Unavailable", "503 Service Unavailable: \(detail)\n")
        default: ("Error", "\(status)\n")
        }
        // Written whole rather than through lws's header helpers: before an upgrade is
        // accepted lws has not recorded the request's HTTP version and would answer HTTP/1.0,
        // which WebSocket clients reject as malformed.
        let retry = retryAfterSeconds.map { "retry-after: \($0)\r\n" } ?? ""
        let response = "HTTP/1.1 \(status) \(phrase)\r\ncontent-type: text/plain; charset=utf-8\r\n\(retry)"
            + "content-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n\(body)"
        var bytes = [UInt8](repeating: 0, count: OutboundFrame.headroom) + Array(response.utf8)
        let count = bytes.count - OutboundFrame.headroom
        _ = bytes.withUnsafeMutableBufferPointer {
            lws_write(wsi, $0.baseAddress! + OutboundFrame.headroom, count, LWS_WRITE_HTTP)
        }
    }

    /// The log line of every refusal: the status, why, and what the request said (429s at debug
    /// level only: a flood would otherwise write a line per attempt).
    func logRefusal(_ wsi: OpaquePointer, status: Int, detail: String) {
        configuration.logger.log(level: status == 429 ? .debug : .warning, "refused an HTTP request", metadata: [
            "status": "\(status)", "reason": "\(detail)",
            "path": "\(requestLine(wsi).map { String(decoding: $0.path, as: UTF8.self) } ?? "")",
            "origin": "\(header(wsi, WSI_TOKEN_ORIGIN) ?? "-")", "host": "\(header(wsi, WSI_TOKEN_HOST) ?? "-")",
            "peer": "\(peerAddress(wsi))",
        ])
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
        // bytes that are not UTF-8 are replaced, as `String(decoding:)` does. (Every upgrade reads
        // several headers: no intermediate array.)
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

    /// Calls `body` with a request header's bytes as sent, copied to the stack: nil when absent,
    /// empty when present but empty.
    func withHeader<R>(_ wsi: OpaquePointer, _ token: lws_token_indexes, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else {
            var probe: CChar = 0
            return body(lws_hdr_copy_fragment(wsi, &probe, 1, token, 0) == 0 ? UnsafeRawBufferPointer(start: nil, count: 0) : nil)
        }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer in
            let copied = Int(lws_hdr_copy(wsi, buffer.baseAddress, Int32(buffer.count), token))
            return body(copied < 0 ? nil : UnsafeRawBufferPointer(start: buffer.baseAddress, count: copied))
        }
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
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            guard let base = buffer.baseAddress, lws_get_peer_simple(wsi, base, buffer.count) != nil else { return "?" }
            return String(cString: base)
        }
    }
}
