// Reading an HTTP request on the service thread: its request line, the headers the API needs
// (copied out while lws still holds them), its body up to `maxHTTPBodyBytes`, and the checks
// that refuse it before the delegate sees it. lws 4.1 reads a body only by `Content-Length`.
internal import CLibWebSockets
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension WebSocketServer {
    /// The request line's method and path (percent-decoded and folded by lws, without the
    /// query). lws fills exactly one of these method tokens for a request it accepted.
    func requestLine(_ wsi: OpaquePointer) -> (method: String, path: [UInt8])? {
        for (token, method) in Self.methodTokens where lws_hdr_total_length(wsi, token) > 0 {
            return (method, headerBytes(wsi, token) ?? [])
        }
        return nil
    }

    private static let methodTokens: [(lws_token_indexes, String)] = [
        (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_PUT_URI, "PUT"),
        (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_DELETE_URI, "DELETE"), (WSI_TOKEN_HEAD_URI, "HEAD"),
        (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
    ]

    /// `apiPath` itself or anything under it (`/api`, `/api/v1/…`; not `/apiary`).
    func isAPIPath(_ path: [UInt8]) -> Bool {
        guard let apiPath = configuration.apiPath else { return false }
        let prefix = Array(apiPath.utf8)
        guard path.count >= prefix.count, path.starts(with: prefix) else { return false }
        return path.count == prefix.count || path[prefix.count] == UInt8(ascii: "/")
    }

    /// `LWS_CALLBACK_HTTP`: a request's headers are complete. Outside the API the answer is
    /// made at once (`serverHTTPResponse`); an API request is checked, then handed over once
    /// its body is in.
    func beginHTTPRequest(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let line = requestLine(wsi) else { return 1 }
        // lws dispatches a request again when it reads its connection while the request is
        // being answered; the connection is not read then, so this is a guard, not a path.
        if let user, let earlier = httpExchanges[user.load(as: UInt64.self)], earlier.wsi == wsi {
            configuration.logger.error("lws dispatched an HTTP request twice; closing its connection", metadata: ["path": "\(earlier.path)"])
            return -1
        }
        nextConnectionID += 1
        let id = nextConnectionID
        user?.storeBytes(of: id, as: UInt64.self)
        let api = isAPIPath(line.path)
        let exchange = HTTPExchange(id: id, wsi: wsi, methodName: line.method, path: String(decoding: line.path, as: UTF8.self),
                                    peer: api ? client(of: wsi) : peerAddress(wsi), counted: api)
        httpExchanges[id] = exchange
        if api {
            httpRequestsInFlight += 1
            beginAPIRequest(exchange, rawPath: line.path)
            return 0
        }
        switch line.method {
        case "GET", "HEAD":
            exchange.headersOnly = line.method == "HEAD"
            startHTTPResponse(exchange, delegate?.serverHTTPResponse(for: exchange.path) ?? HTTPResponse(status: 404, body: "not found\n"))
        default:
            logRefusal(wsi, status: 405, detail: "\(line.method) is not served outside \(configuration.apiPath ?? "the API")")
            exchange.closeAfter = true
            startHTTPResponse(exchange, HTTPResponse(status: 405, contentType: "text/plain; charset=utf-8",
                                                     headers: [("allow", "GET, HEAD")], body: Array("405 Method Not Allowed\n".utf8)))
        }
        return 0
    }

    private func beginAPIRequest(_ exchange: HTTPExchange, rawPath: [UInt8]) {
        let wsi = exchange.wsi
        if let refusal = originPolicy.refusal(origin: header(wsi, WSI_TOKEN_ORIGIN), host: header(wsi, WSI_TOKEN_HOST)) {
            return refuse(exchange, .forbiddenOrigin, refusal)
        }
        guard let method = HTTPMethod(rawValue: exchange.methodName) else {
            return refuse(exchange, .methodNotAllowed, "\(exchange.methodName) is not an API method (\(Self.apiMethods))")
        }
        exchange.method = method
        if headerBytes(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) != nil {
            return refuse(exchange, .lengthRequired,
                          "Transfer-Encoding is not supported (a chunked body cannot be read here): send the body with Content-Length")
        }
        var contentLength: Int?
        if let text = headerBytes(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) {
            // Digits only: lws reads the number with atoll, which would take "5, 7" or "5x" as 5.
            guard !text.isEmpty, text.count <= 18, text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let length = Int(String(decoding: text, as: UTF8.self)) else {
                return refuse(exchange, .badRequest, "Content-Length \"\(String(decoding: text, as: UTF8.self))\" is not a length")
            }
            contentLength = length
        }
        if method.requiresContentLength && contentLength == nil {
            return refuse(exchange, .lengthRequired, "a \(method.rawValue) needs a Content-Length (0 for no body)")
        }
        if let contentLength, contentLength > configuration.maxHTTPBodyBytes {
            return refuse(exchange, .bodyTooLarge(limit: configuration.maxHTTPBodyBytes),
                          "the body is \(contentLength) bytes, over the limit of \(configuration.maxHTTPBodyBytes) (setting `maxHTTPBodyBytes`)")
        }
        if httpRequestsInFlight > configuration.maxHTTPRequestsInFlight {
            return refuse(exchange, .overloaded(limit: configuration.maxHTTPRequestsInFlight),
                          "\(configuration.maxHTTPRequestsInFlight) requests are being answered (setting `maxHTTPRequestsInFlight`)")
        }
        guard String(validating: rawPath, as: UTF8.self) != nil else {
            return refuse(exchange, .badRequest, "the path is not UTF-8 once percent-decoded")
        }
        switch copyAPIHeadersAndQuery(exchange) {
        case .some(let problem): return refuse(exchange, .badRequest, problem)
        case .none: break
        }
        // lws calls HTTP_BODY and HTTP_BODY_COMPLETION for a body, and for a POST whose
        // Content-Length is 0; a request without either is complete now.
        if let contentLength, contentLength > 0 || method == .post {
            exchange.body.reserveCapacity(contentLength)
            exchange.phase = .receivingBody
        } else {
            handOver(exchange)
        }
    }

    private static let apiMethods = HTTPMethod.allCases.map(\.rawValue).joined(separator: ", ")

    /// Copies the headers the API uses and the query, checking each is UTF-8; returns what is
    /// wrong, or nil.
    private func copyAPIHeadersAndQuery(_ exchange: HTTPExchange) -> String? {
        let wsi = exchange.wsi
        for name in HTTPRequest.headerNames {
            let bytes: [UInt8]?
            if let token = Self.headerTokens[name] {
                bytes = headerBytes(wsi, token)
            } else {
                bytes = customHeaderBytes(wsi, name)
            }
            guard let bytes else { continue }
            guard let value = String(validating: bytes, as: UTF8.self) else { return "the \(name) header is not UTF-8" }
            exchange.headers[name] = value.trimmingHTTPWhitespace()
        }
        for index in 0..<64 {
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, Int32(index)))
            var buffer = [CChar](repeating: 0, count: length + 1)
            let copied = Int(lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, Int32(index)))
            guard copied >= 0 else { break }
            guard copied > 0 else { continue }
            guard let pair = String(validating: buffer.prefix(copied).map { UInt8(bitPattern: $0) }, as: UTF8.self) else {
                return "the query is not UTF-8 once percent-decoded"
            }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            exchange.query.append(HTTPQueryItem(name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : ""))
        }
        return nil
    }

    /// Header names lws parses into tokens of its own, by lower-case name; any other header is
    /// a custom one (`lws_hdr_custom_copy`).
    private static let headerTokens: [String: lws_token_indexes] = {
        var tokens: [String: lws_token_indexes] = [:]
        for index in 0..<Int(WSI_TOKEN_COUNT.rawValue) {
            let token = lws_token_indexes(rawValue: UInt32(index))
            guard let name = lws_token_to_string(token) else { continue }
            let text = String(cString: name)
            if text.hasSuffix(":") { tokens[String(text.dropLast())] = token }
        }
        return tokens
    }()

    private func customHeaderBytes(_ wsi: OpaquePointer, _ name: String) -> [UInt8]? {
        let key = name + ":"
        let keyLength = Int32(key.utf8.count)
        let length = Int(lws_hdr_custom_length(wsi, key, keyLength))
        guard length >= 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = Int(lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, keyLength))
        guard copied >= 0 else { return nil }
        return buffer.prefix(copied).map { UInt8(bitPattern: $0) }
    }

    /// `LWS_CALLBACK_HTTP_BODY`: a piece of the body (lws never passes more than
    /// `Content-Length`, which was checked against the limit). Returns false when the
    /// connection must close at once.
    func receiveHTTPBody(_ user: UnsafeMutableRawPointer?, _ piece: UnsafeRawBufferPointer) -> Bool {
        guard let exchange = httpExchange(user), case .receivingBody = exchange.phase else { return true }
        // lws 4.1 reads the body of a request whose head it took from bytes it had already read
        // with the request before (pipelined) from the start of those bytes: the "body" begins
        // with the request line itself, and lws then loops for ever over what follows
        // (lws_http_action's body loop consumes nothing once the body is complete). Such a
        // request cannot be read: it is refused and the connection closed now, from inside the
        // callback (the only way out of that loop), rather than handed over with a wrong body.
        if exchange.body.isEmpty, piece.starts(with: Array("\(exchange.methodName) /".utf8)) {
            let refusal = HTTPRefusal(reason: .badRequest,
                                      detail: "a request with a body sent before the answer to the one before it (pipelined) cannot be read here; send it on its own",
                                      method: exchange.methodName, path: exchange.path)
            logRefusal(exchange.wsi, status: refusal.status, detail: refusal.detail)
            exchange.closeAfter = true
            startHTTPResponse(exchange, refusalResponse(refusal))
            writeQueuedAtOnce(exchange)
            return false
        }
        exchange.body.append(contentsOf: piece)
        return true
    }

    /// `LWS_CALLBACK_HTTP_BODY_COMPLETION`: the body is in. Returns false when the connection
    /// must close at once.
    func completeHTTPBody(_ user: UnsafeMutableRawPointer?) -> Bool {
        guard let exchange = httpExchange(user) else { return true }
        exchange.bodyCompletions += 1
        if case .receivingBody = exchange.phase {
            handOver(exchange)
            return true
        }
        // Once is a refused request's body ending; again, lws is looping over pipelined bytes it
        // had read (see `receiveHTTPBody`), which only closing ends: what is queued of the
        // refusal goes out first.
        guard exchange.bodyCompletions > 1 else { return true }
        writeQueuedAtOnce(exchange)
        return false
    }

    /// Gives the whole request to the delegate and starts its deadline. The connection is not
    /// read meanwhile: a pipelined request waits in lws's buffer until this one is answered.
    private func handOver(_ exchange: HTTPExchange) {
        guard let method = exchange.method else { return }
        let now = Self.monotonicMilliseconds()
        let deadline = now + UInt64(max(configuration.httpResponseTimeoutMilliseconds, 1))
        exchange.phase = .awaitingAnswer(deadline: deadline)
        pauseHTTPReading(exchange)
        // lws's own timeout (the body's, 20 s) would close the connection under a slow answer;
        // `httpResponseTimeoutMilliseconds` is the bound from here.
        lws_set_timeout(exchange.wsi, NO_PENDING_TIMEOUT, 0)
        httpDeadlines.append(exchange.id, deadline: deadline)
        armHTTPDeadlineTimer()
        let request = HTTPRequest(id: exchange.id, method: method, path: exchange.path, query: exchange.query,
                                  headers: exchange.headers, body: exchange.body, peer: exchange.peer)
        exchange.body = []
        guard let delegate else {
            startHTTPResponse(exchange, HTTPResponse(status: 503, body: "no handler\n"))
            return
        }
        delegate.serverDidReceiveHTTPRequest(request)
    }

    /// Answers an API request with the delegate's response for `reason`, then closes: what
    /// is left of the request (its body) is not read.
    private func refuse(_ exchange: HTTPExchange, _ reason: HTTPRefusal.Reason, _ detail: String) {
        let refusal = HTTPRefusal(reason: reason, detail: detail, method: exchange.methodName, path: exchange.path)
        logRefusal(exchange.wsi, status: refusal.status, detail: detail)
        exchange.closeAfter = true
        startHTTPResponse(exchange, refusalResponse(refusal))
    }

    /// The delegate's response for a refusal, with the status and the headers it needs.
    func refusalResponse(_ refusal: HTTPRefusal) -> HTTPResponse {
        var response = delegate?.serverHTTPRefusalResponse(refusal) ?? HTTPResponse(status: refusal.status, body: refusal.detail + "\n")
        response.status = refusal.status
        switch refusal.reason {
        case .methodNotAllowed: response.headers.append(("allow", Self.apiMethods))
        case .overloaded: response.headers.append(("retry-after", "1"))
        default: break
        }
        return response
    }

    func pauseHTTPReading(_ exchange: HTTPExchange) {
        guard !exchange.readingPaused else { return }
        exchange.readingPaused = true
        _ = pws_rx_flow(exchange.wsi, 0)
    }

    func httpExchange(_ user: UnsafeMutableRawPointer?) -> HTTPExchange? {
        guard let user else { return nil }
        return httpExchanges[user.load(as: UInt64.self)]
    }
}

extension String {
    /// Without the spaces and tabs HTTP allows around a header's value.
    func trimmingHTTPWhitespace() -> String {
        let bytes = Array(utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let start = bytes.firstIndex(where: { !isSpace($0) }), let end = bytes.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(decoding: bytes[start...end], as: UTF8.self)
    }
}
