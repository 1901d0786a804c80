// Writing HTTP responses on the service thread: an answer the delegate gives now or later
// (`respond(to:with:)`), written a piece at a time while the connection is not read, then the
// next (pipelined) request is read; and the deadline of unanswered requests.
//
// Why the transport writes an answer on the socket itself rather than with lws_write from
// WRITEABLE callbacks: lws 4.1's HTTP/1 role must not read a connection while its answer is
// pending (a pipelined request read then is swallowed by its finished parser, and the pending
// request is dispatched a second time: ops-h1.c `lws_read_h1`, LRS_ESTABLISHED), and it gives
// no WRITEABLE callback to a connection whose reading is paused (`rops_handle_POLLIN_h1`
// returns early for a flow-controlled wsi), so an answer written through lws would need the
// connection read meanwhile. lws has no TLS on this server and writes nothing of its own to
// an HTTP connection while a request is being answered, so the answer's bytes are the only
// ones on the socket until `lws_http_transaction_completed` hands it back to lws.
internal import CLibWebSockets
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension WebSocketServer {
    /// Bytes written per connection per turn: a 1 MB document goes out in sixteen turns, so
    /// other connections are served in between.
    static let httpPieceBytes = 64 << 10
    /// Longest wait before trying a connection whose socket was full again.
    private static let httpWriteRetryMaxMs: UInt64 = 20

    // MARK: Service-thread API

    /// Answers the API request `id` (handed over by `serverDidReceiveHTTPRequest`). Returns
    /// false, writing nothing, when it is no longer waiting: answered already, timed out, or
    /// its connection gone.
    @discardableResult
    public func respond(to id: UInt64, with response: HTTPResponse) -> Bool {
        guard let exchange = httpExchanges[id], exchange.isAwaitingAnswer else { return false }
        startHTTPResponse(exchange, response)
        return true
    }

    /// API requests being read or answered (`maxHTTPRequestsInFlight` bounds them).
    public var httpRequestsPending: Int { httpRequestsInFlight }

    // MARK: Internals

    /// Queues the response's bytes for the write pump. Never writes at once: this may run
    /// inside the connection's own lws callback, where it may not be closed if the write fails.
    func startHTTPResponse(_ exchange: HTTPExchange, _ response: HTTPResponse) {
        pauseHTTPReading(exchange)
        lws_set_timeout(exchange.wsi, NO_PENDING_TIMEOUT, 0)
        guard let header = responseHeader(exchange, response) else {
            configuration.logger.error("could not make an HTTP response header", metadata: ["path": "\(exchange.path)"])
            exchange.closeAfter = true
            exchange.output = []
            exchange.phase = .writing
            httpWriting.append(exchange.id)
            scheduleHTTPWrites(afterMilliseconds: 0)
            return
        }
        exchange.output = header + (exchange.headersOnly ? [] : response.body)
        exchange.phase = .writing
        exchange.lastProgress = Self.monotonicMilliseconds()
        httpWriting.append(exchange.id)
        scheduleHTTPWrites(afterMilliseconds: 0)
    }

    /// Writes what is queued for a connection now, as much as the socket takes, when it is
    /// about to be closed from inside its own callback (the pump will not reach it then).
    func writeQueuedAtOnce(_ exchange: HTTPExchange) {
        guard case .writing = exchange.phase, exchange.written < exchange.output.count else { return }
        let sent = exchange.output.withUnsafeBytes { bytes in
            Glibc.send(lws_get_socket_fd(exchange.wsi), bytes.baseAddress! + exchange.written, bytes.count - exchange.written,
                       Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        if sent > 0 { exchange.written += sent }
    }

    /// The status line and headers, made by lws (it knows the request's HTTP version).
    private func responseHeader(_ exchange: HTTPExchange, _ response: HTTPResponse) -> [UInt8]? {
        var headers = response.headers.filter { header in
            guard HTTPResponse.isWritable(name: header.name, value: header.value) else {
                configuration.logger.warning("left out an HTTP response header that cannot be written as it is",
                                             metadata: ["name": "\(header.name)", "path": "\(exchange.path)"])
                return false
            }
            return true
        }
        if exchange.closeAfter { headers.append(("connection", "close")) }
        let size = 512 + response.contentType.utf8.count + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        var buffer = [UInt8](repeating: 0, count: size)
        let length = buffer.withUnsafeMutableBufferPointer { buffer -> Int? in
            let start = buffer.baseAddress!
            var cursor: UnsafeMutablePointer<UInt8>? = start
            let end = start + buffer.count
            guard lws_add_http_common_headers(exchange.wsi, UInt32(response.status), response.contentType,
                                              lws_filepos_t(response.body.count), &cursor, end) == 0 else { return nil }
            for header in headers {
                let name = Array((header.name + ":").utf8) + [0]
                let value = Array(header.value.utf8)
                let failed = name.withUnsafeBufferPointer { name in
                    value.withUnsafeBufferPointer { value in
                        lws_add_http_header_by_name(exchange.wsi, name.baseAddress, value.baseAddress, Int32(value.count),
                                                    &cursor, end) != 0
                    }
                }
                if failed { return nil }
            }
            guard lws_finalize_http_header(exchange.wsi, &cursor, end) == 0, let cursor else { return nil }
            return cursor - start
        }
        return length.map { Array(buffer.prefix($0)) }
    }

    func scheduleHTTPWrites(afterMilliseconds delay: UInt64) {
        guard let httpWriteTimer else { return }
        if delay == 0 || !httpWriteTimer.isScheduled { httpWriteTimer.schedule(afterMilliseconds: delay) }
    }

    /// One round of the write pump: a piece for every connection with an answer to write whose
    /// socket takes it. Runs from its own timer, outside every connection's callbacks.
    func pumpHTTPWrites() {
        var progressed = false
        let now = Self.monotonicMilliseconds()
        for id in httpWriting {
            // A drop below closes the connection at once, which forgets its exchange.
            guard let exchange = httpExchanges[id] else { continue }
            if case .lingering(let until) = exchange.phase {
                if drainLingering(exchange) || now >= until { dropHTTPConnection(exchange) }
                continue
            }
            guard case .writing = exchange.phase else { continue }
            switch writePiece(exchange) {
            case .wrote:
                exchange.lastProgress = now
                progressed = true
            case .done:
                finishHTTPExchange(exchange)
            case .full:
                // A peer that takes nothing for this long while an answer waits for it is
                // dropped: the answer holds memory.
                if now - exchange.lastProgress > UInt64(max(configuration.idlePingMilliseconds, 1)) {
                    configuration.logger.notice("dropping an HTTP connection that reads nothing", metadata: ["path": "\(exchange.path)"])
                    dropHTTPConnection(exchange)
                }
            case .failed:
                dropHTTPConnection(exchange)
            }
        }
        httpWriting.removeAll { httpExchanges[$0] == nil }
        guard !httpWriting.isEmpty else {
            httpWriteBackoff = 0
            return
        }
        // Sockets that were full are tried again soon, then less often while they stay full.
        httpWriteBackoff = progressed ? 0 : min(max(httpWriteBackoff * 2, 1), Self.httpWriteRetryMaxMs)
        scheduleHTTPWrites(afterMilliseconds: httpWriteBackoff)
    }

    private enum PieceResult { case wrote, done, full, failed }

    private func writePiece(_ exchange: HTTPExchange) -> PieceResult {
        let remaining = exchange.output.count - exchange.written
        guard remaining > 0 else { return .done }
        let fd = lws_get_socket_fd(exchange.wsi)
        guard fd >= 0 else { return .failed }
        let count = min(remaining, Self.httpPieceBytes)
        let sent = exchange.output.withUnsafeBytes { bytes in
            Glibc.send(fd, bytes.baseAddress! + exchange.written, count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        if sent < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .full : .failed }
        exchange.written += sent
        return exchange.written == exchange.output.count ? .done : .wrote
    }

    /// The last byte is out: the connection reads the next request, or closes.
    private func finishHTTPExchange(_ exchange: HTTPExchange) {
        exchange.output = []
        if exchange.closeAfter {
            // A refusal whose request was not read to its end: a FIN goes after the answer, and
            // the connection lingers (still not read by lws, which could take what follows for
            // another request) until the peer closes.
            _ = Glibc.shutdown(lws_get_socket_fd(exchange.wsi), Int32(SHUT_WR))
            exchange.phase = .lingering(until: Self.monotonicMilliseconds() + Self.httpLingerMs)
            if exchange.counted { httpRequestsInFlight -= 1 }
            exchange.counted = false
            return
        }
        forgetHTTPExchange(exchange)
        // Resets lws's request state for the next request on a kept-alive connection, or says
        // to close (HTTP/1.0, `Connection: close`).
        if lws_http_transaction_completed(exchange.wsi) != 0 {
            dropHTTPConnection(exchange)
            return
        }
        readingHeadersAgain(exchange.wsi)
        resumeHTTPReading(exchange)
    }

    /// How long a refused connection lingers for its peer to close.
    static let httpLingerMs: UInt64 = 2_000

    /// Reads and drops what a lingering connection's peer sent; true once it closed (or failed).
    private func drainLingering(_ exchange: HTTPExchange) -> Bool {
        let fd = lws_get_socket_fd(exchange.wsi)
        var scratch = [UInt8](repeating: 0, count: 16 << 10)
        for _ in 0..<64 {
            let count = scratch.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { return true }
            if count < 0 { return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) }
        }
        return false
    }

    /// Closes now; lws reports it (`LWS_CALLBACK_CLOSED_HTTP`) before this returns.
    private func dropHTTPConnection(_ exchange: HTTPExchange) {
        forgetHTTPExchange(exchange)
        pws_drop_now(exchange.wsi)
    }

    private func resumeHTTPReading(_ exchange: HTTPExchange) {
        guard exchange.readingPaused else { return }
        exchange.readingPaused = false
        _ = pws_rx_flow(exchange.wsi, 1)
    }

    private func forgetHTTPExchange(_ exchange: HTTPExchange) {
        guard httpExchanges.removeValue(forKey: exchange.id) != nil else { return }
        if exchange.counted { httpRequestsInFlight -= 1 }
    }

    /// The connection closed: whatever was being read or written for it is dropped.
    func httpExchangeClosed(_ exchange: HTTPExchange) {
        let awaited = exchange.isAwaitingAnswer
        forgetHTTPExchange(exchange)
        if awaited { delegate?.serverHTTPRequestAbandoned(exchange.id) }
    }

    /// Sets the deadline timer for the earliest unanswered request, unless it is set: deadlines
    /// only come later than the ones already queued.
    func armHTTPDeadlineTimer() {
        guard let httpDeadlineTimer, !httpDeadlineTimer.isScheduled, let deadline = httpDeadlines.nextDeadline else { return }
        let now = Self.monotonicMilliseconds()
        httpDeadlineTimer.schedule(afterMilliseconds: deadline > now ? deadline - now : 0)
    }

    /// Answers the requests whose deadline passed with 504, and tells the delegate.
    func expireHTTPRequests() {
        for id in httpDeadlines.expire(at: Self.monotonicMilliseconds()) {
            guard let exchange = httpExchanges[id], exchange.isAwaitingAnswer else { continue }
            let timeout = configuration.httpResponseTimeoutMilliseconds
            let refusal = HTTPRefusal(reason: .timedOut(afterMilliseconds: timeout),
                                      detail: "no answer within \(timeout) ms (setting `httpResponseTimeoutMs`)",
                                      requestID: id, method: exchange.methodName, path: exchange.path)
            configuration.logger.warning("an HTTP request timed out", metadata: [
                "path": "\(exchange.path)", "method": "\(exchange.methodName)", "peer": "\(exchange.peer)",
            ])
            startHTTPResponse(exchange, refusalResponse(refusal))
            delegate?.serverHTTPRequestAbandoned(id)
        }
        armHTTPDeadlineTimer()
    }
}
