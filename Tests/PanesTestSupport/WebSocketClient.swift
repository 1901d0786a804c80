// Threading model: the test's thread calls the public methods; one reader thread per client
// (unless `readsInBackground` is off) reads frames into `Shared`, answers pings and close
// frames when `answersPeer` is on, and wakes waiters. Writes from both threads go through one
// lock so frames never interleave. All shared state is behind `Shared.condition`. The frame
// log (PANES_FRAME_LOG) is written from the reader thread (received messages) and under the
// write lock (sent ones).
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small WebSocket client over a POSIX socket, for tests: the handshake, masking and
/// fragmentation done by hand, so a test can also send what a conforming client never would
/// (unmasked frames, reserved bits, lying lengths) and read every frame the server sends.
/// Not permessage-deflate (tests of that use Python's `websockets` as the peer).
public final class WebSocketClient: @unchecked Sendable {
    public struct Options: Sendable {
        public var path = "/ws"
        /// Offered in `Sec-WebSocket-Protocol`; empty offers none.
        public var subprotocols = ["panes.v1"]
        /// Sent as `Origin`, to act like a browser page; nil sends none.
        public var origin: String?
        /// The `Host` header; nil sends `HOST:PORT` as connected to.
        public var hostHeader: String?
        public var extraHeaders: [(name: String, value: String)] = []
        /// The `Upgrade` and `Connection` values (HTTP compares them in any ASCII case).
        public var upgrade = "websocket"
        public var connection = "Upgrade"
        /// Answer pings with pongs and a close frame with a close frame, as browsers do.
        public var answersPeer = true
        /// Off: nothing is read after the handshake until the test reads (a peer that stalls).
        public var readsInBackground = true
        /// SO_RCVBUF, set before connecting (a small one makes the server's writes back up sooner).
        public var receiveBufferBytes: Int?
        /// The local address to connect from (another loopback address, `127.0.0.2`, is another
        /// peer to the server); nil lets the kernel choose.
        public var sourceAddress: String?
        public var timeout: Double = 10
        /// Called once the TCP connection is made, before the upgrade request is written.
        public var afterConnecting: (@Sendable () -> Void)?
        /// Records the text messages in the frame log (`PANES_FRAME_LOG`), to be checked against
        /// PROTOCOL.schema.json; off for servers that do not speak `panes.v1` (the bare transport).
        public var recordsFrames = true

        public init(origin: String? = nil) {
            self.origin = origin
        }
    }

    /// A whole message, or the end of the connection.
    public enum Event: Sendable, Equatable {
        case text(String)
        case binary([UInt8])
        /// The connection ended: the close code the server sent, or nil when it sent none.
        case closed(code: UInt16?, reason: String)
    }

    public enum Failure: Error, CustomStringConvertible {
        case connect(String)
        /// The server answered the upgrade with this status instead of 101.
        case refused(status: Int, body: String)
        case handshake(String)

        public var description: String {
            switch self {
            case .connect(let reason): "could not connect: \(reason)"
            case .refused(let status, let body): "upgrade refused with \(status): \(body)"
            case .handshake(let reason): "bad handshake: \(reason)"
            }
        }
    }

    /// The 101 response's headers, names lower-cased.
    public let responseHeaders: [String: String]
    private let shared: Shared
    private let options: Options
    /// Message-level reassembly, on the test's thread.
    private var partial: [UInt8]?
    private var partialIsBinary = false
    private var closeDelivered = false

    /// Connects and completes the handshake, or throws why not.
    public init(host: String = "127.0.0.1", port: Int, options: Options = Options()) throws {
        self.options = options
        let fd = try Self.connectSocket(host: host, port: port, options: options)
        let shared = Shared(fd: fd, log: options.recordsFrames ? FrameLog.shared?.connection() : nil)
        options.afterConnecting?()
        do {
            let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            var request = "GET \(options.path) HTTP/1.1\r\nHost: \(options.hostHeader ?? "\(host):\(port)")\r\n"
                + "Upgrade: \(options.upgrade)\r\nConnection: \(options.connection)\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
            if !options.subprotocols.isEmpty { request += "Sec-WebSocket-Protocol: \(options.subprotocols.joined(separator: ", "))\r\n" }
            if let origin = options.origin { request += "Origin: \(origin)\r\n" }
            for header in options.extraHeaders { request += "\(header.name): \(header.value)\r\n" }
            shared.write(Array((request + "\r\n").utf8))
            let (status, headers, body) = try shared.readHTTPResponse(timeout: options.timeout)
            guard status == 101 else { throw Failure.refused(status: status, body: body) }
            let expected = Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
            guard headers["sec-websocket-accept"] == expected else {
                throw Failure.handshake("Sec-WebSocket-Accept is \(headers["sec-websocket-accept"] ?? "missing")")
            }
            responseHeaders = headers
        } catch {
            shared.shutdown()
            Glibc.close(fd)
            throw error
        }
        self.shared = shared
        if options.readsInBackground {
            let answers = options.answersPeer
            let thread = Thread { shared.readLoop(answersPeer: answers) }
            thread.name = "websocket-client-reader"
            thread.start()
        }
    }

    deinit {
        shared.shutdown()
        if options.readsInBackground { shared.waitForReader() }
        Glibc.close(shared.fd)
    }

    // MARK: Messages

    public func send(_ text: String) { send(frame: .text(text)) }

    public func send(_ bytes: [UInt8], binary: Bool) {
        send(frame: WebSocketFrame(binary ? .binary : .text, bytes))
    }

    /// The next message or the end of the connection, skipping control frames; nil if nothing
    /// arrives in time (or after the end was reported).
    public func receive(timeout: Double = 5) -> Event? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while let frame = shared.nextFrame(until: deadline) {
            switch frame.kind {
            case .text?, .binary?:
                partial = frame.payload
                partialIsBinary = frame.kind == .binary
            case .continuation?:
                partial = (partial ?? []) + frame.payload
            case .close?:
                closeDelivered = true
                return .closed(code: frame.closeCode, reason: frame.closeReason)
            default:
                continue
            }
            if frame.fin, let message = partial {
                partial = nil
                return partialIsBinary ? .binary(message) : .text(String(decoding: message, as: UTF8.self))
            }
        }
        if shared.isEnded && !closeDelivered {
            closeDelivered = true
            return .closed(code: nil, reason: "")
        }
        return nil
    }

    /// Sends a close frame and waits (up to 5 s) for the server to end the connection.
    public func close(code: UInt16 = 1000, reason: String = "") {
        shared.sendCloseOnce(WebSocketFrame.close(code, reason).encoded())
        shared.waitUntilEnded(timeout: 5)
    }

    /// Ends the TCP connection without a close frame, as a crashed tab or a cut cable would.
    public func abort() {
        shared.shutdown()
        shared.waitUntilEnded(timeout: 5)
    }

    /// The server ended the connection (or `abort` did).
    public var isFinished: Bool { shared.isEnded }

    // MARK: Frames

    /// Writes one frame; `masked: false` and `announcedLength` break the protocol on purpose.
    public func send(frame: WebSocketFrame, masked: Bool = true, announcedLength: UInt64? = nil) {
        shared.write(frame.encoded(masked: masked, announcedLength: announcedLength), frame: frame)
    }

    /// Writes bytes as they are.
    public func sendRaw(_ bytes: [UInt8]) { shared.write(bytes) }

    /// Writes what the socket takes now without waiting: the count written (0 when full), or
    /// -1 when the connection is gone.
    public func sendWithoutWaiting(_ bytes: [UInt8]) -> Int { shared.writeWithoutWaiting(bytes) }

    /// Whether the socket can take more bytes within `timeout` seconds: false means the
    /// server has stopped reading and the kernel's buffers are full.
    public func waitUntilWritable(timeout: Double) -> Bool {
        var descriptor = pollfd(fd: shared.fd, events: Int16(POLLOUT), revents: 0)
        return poll(&descriptor, 1, Int32(timeout * 1000)) > 0
    }

    /// The next frame exactly as the server sent it, control frames included; nil on timeout
    /// or when the connection has ended and every frame was read.
    public func nextFrame(timeout: Double = 5) -> WebSocketFrame? {
        shared.nextFrame(until: Date(timeIntervalSinceNow: timeout))
    }

    /// Every frame until the server ends the connection (or the timeout passes).
    public func framesUntilEnd(timeout: Double = 10) -> [WebSocketFrame] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var frames: [WebSocketFrame] = []
        while let frame = shared.nextFrame(until: deadline) { frames.append(frame) }
        return frames
    }

    /// For a client that does not read in the background (a stalled peer catching up): reads
    /// until a close frame arrives, the connection ends or `timeout` seconds pass, and returns
    /// every frame read.
    public func readUntilClose(timeout: Double) -> [WebSocketFrame] {
        shared.readLoop(answersPeer: false, stopAt: Date(timeIntervalSinceNow: timeout), stopAtClose: true)
        return framesUntilEnd(timeout: 0)
    }

    // MARK: Connecting

    /// One plain HTTP/1.1 `GET` (no upgrade) over a socket of its own, from `options.sourceAddress`
    /// if set; the whole answer, read until the server closes.
    public static func plainGET(_ path: String, host: String = "127.0.0.1", port: Int,
                                options: Options = Options()) throws -> String {
        let fd = try connectSocket(host: host, port: port, options: options)
        defer { Glibc.close(fd) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard Glibc.send(fd, request, request.count, 0) == request.count else { throw Failure.connect("send failed") }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer += buffer[0..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// A bare TCP connection (from `options.sourceAddress` if set) that sends `bytes`, if any,
    /// and closes without reading: a peer lws drops before a whole request reaches any check.
    public static func connectSendAndClose(_ bytes: [UInt8], host: String = "127.0.0.1", port: Int,
                                           options: Options = Options()) throws {
        let fd = try connectSocket(host: host, port: port, options: options)
        defer { Glibc.close(fd) }
        guard bytes.isEmpty || Glibc.send(fd, bytes, bytes.count, 0) == bytes.count else {
            throw Failure.connect("send failed")
        }
    }

    private static func connectSocket(host: String, port: Int, options: Options) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.connect("socket() failed") }
        if var size = options.receiveBufferBytes.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source = options.sourceAddress {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let reason = String(cString: strerror(errno))
                Glibc.close(fd)
                throw Failure.connect("bind \(source): \(reason)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw Failure.connect("\(host):\(port): \(reason)")
        }
        return fd
    }
}

/// What the reader thread and the test's thread share.
private final class Shared: @unchecked Sendable {
    let fd: Int32
    /// Where whole text messages are recorded, each way; nil when frames are not logged.
    private let log: FrameLog.Connection?
    private var sentMessage = MessageAssembler()
    private var receivedMessage = MessageAssembler()
    private let condition = NSCondition()
    private let writeLock = NSLock()
    private var frames: [WebSocketFrame] = []
    private var ended = false
    private var readerDone = false
    private var closeSent = false
    /// Bytes read but not yet parsed into frames.
    private var buffer: [UInt8] = []

    init(fd: Int32, log: FrameLog.Connection?) {
        self.fd = fd
        self.log = log
    }

    var isEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ended && frames.isEmpty
    }

    /// Writes bytes; `frame`, when they encode one, is recorded in the frame log.
    func write(_ bytes: [UInt8], frame: WebSocketFrame? = nil) {
        writeLock.lock()
        defer { writeLock.unlock() }
        if let log, let frame, let message = sentMessage.add(frame) { log.record(.sent, message) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    func writeWithoutWaiting(_ bytes: [UInt8]) -> Int {
        writeLock.lock()
        defer { writeLock.unlock() }
        let written = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if written < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1 }
        return written
    }

    func sendCloseOnce(_ bytes: [UInt8]) {
        condition.lock()
        let first = !closeSent
        closeSent = true
        condition.unlock()
        if first { write(bytes) }
    }

    func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    /// Reads the handshake's response: status, headers (lower-cased names) and body. Bytes
    /// after the headers of a 101 stay in `buffer`: they are the first frames.
    func readHTTPResponse(timeout: Double) throws -> (Int, [String: String], String) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            if let index = firstIndex(of: separator) { end = index; break }
            guard readSome(until: deadline) == .data else {
                throw WebSocketClient.Failure.handshake(buffer.isEmpty ? "the server closed the connection without answering" : "incomplete response")
            }
        }
        let head = String(decoding: buffer[..<end!], as: UTF8.self)
        buffer.removeFirst(end! + separator.count)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw WebSocketClient.Failure.handshake("status line \(statusLine)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = ""
        if status != 101, let length = headers["content-length"].flatMap(Int.init) {
            while buffer.count < length && readSome(until: deadline) == .data {}
            body = String(decoding: buffer.prefix(length), as: UTF8.self)
        }
        return (status, headers, body)
    }

    /// The reader thread's loop (or, with `stopAt`, one bounded pass on the caller's thread).
    func readLoop(answersPeer: Bool, stopAt: Date? = nil, stopAtClose: Bool = false) {
        defer {
            if stopAt == nil {
                condition.lock()
                ended = true
                readerDone = true
                condition.broadcast()
                condition.unlock()
            }
        }
        while true {
            while let frame = parseFrame() {
                if let log, let message = receivedMessage.add(frame) { log.record(.received, message) }
                if answersPeer { answer(frame) }
                condition.lock()
                frames.append(frame)
                condition.broadcast()
                condition.unlock()
                if stopAtClose && frame.kind == .close { return }
            }
            switch readSome(until: stopAt ?? .distantFuture) {
            case .data: continue
            case .timeout: return
            case .end:
                condition.lock()
                ended = true
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }

    func nextFrame(until deadline: Date) -> WebSocketFrame? {
        condition.lock()
        defer { condition.unlock() }
        while frames.isEmpty && !ended {
            if !condition.wait(until: deadline) { break }
        }
        return frames.isEmpty ? nil : frames.removeFirst()
    }

    func waitUntilEnded(timeout: Double) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        while !ended && condition.wait(until: deadline) {}
        condition.unlock()
    }

    func waitForReader() {
        let deadline = Date(timeIntervalSinceNow: 5)
        condition.lock()
        while !readerDone && condition.wait(until: deadline) {}
        condition.unlock()
    }

    private func answer(_ frame: WebSocketFrame) {
        switch frame.kind {
        case .ping?:
            write(WebSocketFrame(.pong, frame.payload).encoded())
        case .close?:
            sendCloseOnce(WebSocketFrame(.close, Array(frame.payload.prefix(2))).encoded())
        default:
            break
        }
    }

    private enum ReadResult { case data, end, timeout }

    /// Appends what the socket has.
    private func readSome(until deadline: Date) -> ReadResult {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = deadline == .distantFuture ? -1 : max(0, Int32(deadline.timeIntervalSinceNow * 1000))
        guard poll(&descriptor, 1, milliseconds) > 0 else { return .timeout }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { return .end }
        buffer += chunk.prefix(count)
        return .data
    }

    private func firstIndex(of pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        return (0...(buffer.count - pattern.count)).first { buffer[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    /// One whole frame from the front of `buffer`, if it is all there.
    private func parseFrame() -> WebSocketFrame? {
        guard buffer.count >= 2 else { return nil }
        var offset = 2
        var length = UInt64(buffer[1] & 0x7F)
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = UInt64(buffer[2]) << 8 | UInt64(buffer[3])
            offset = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = (2..<10).reduce(0) { $0 << 8 | UInt64(buffer[$1]) }
            offset = 10
        }
        let masked = buffer[1] & 0x80 != 0
        let key = masked ? Array(buffer[offset..<min(offset + 4, buffer.count)]) : []
        if masked { offset += 4 }
        guard UInt64(buffer.count - min(offset, buffer.count)) >= length, buffer.count >= offset else { return nil }
        var payload = Array(buffer[offset..<(offset + Int(length))])
        if masked { payload = payload.enumerated().map { $0.element ^ key[$0.offset & 3] } }
        let frame = WebSocketFrame(fin: buffer[0] & 0x80 != 0, rsv: buffer[0] & 0x70, opcode: buffer[0] & 0x0F, payload: payload)
        buffer.removeFirst(offset + Int(length))
        return frame
    }
}
