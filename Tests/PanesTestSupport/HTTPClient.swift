// Threading: one test thread uses a client at a time; it reads only when asked.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 client over a POSIX socket, for tests: requests written byte by byte as
/// the test says (pipelined, trickled, with lying lengths, then abandoned), and responses read
/// one at a time with their headers and body, so a test sees exactly what the server sent.
public final class HTTPClient: @unchecked Sendable {
    public struct Response: Sendable {
        public let status: Int
        /// Lower-cased names; a repeated header keeps its last value.
        public let headers: [String: String]
        public let body: [UInt8]

        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public enum Failure: Error, CustomStringConvertible {
        case connect(String)
        case closed(afterBytes: Int)
        case timeout
        case malformed(String)

        public var description: String {
            switch self {
            case .connect(let reason): "could not connect: \(reason)"
            case .closed(let bytes): "the server closed the connection (\(bytes) bytes of a response read)"
            case .timeout: "no complete response in time"
            case .malformed(let reason): "malformed response: \(reason)"
            }
        }
    }

    public let port: Int
    private let fd: Int32
    /// Read and not yet parsed: the start of the next response when requests were pipelined.
    private var buffer: [UInt8] = []
    private var closed = false

    /// - Parameters:
    ///   - receiveBufferBytes: SO_RCVBUF, for a client that reads slowly.
    ///   - sourceAddress: the local address to connect from (another loopback address,
    ///     `127.0.0.2`, is another peer to the server); nil lets the kernel choose.
    public init(port: Int, receiveBufferBytes: Int? = nil, sourceAddress: String? = nil) throws {
        self.port = port
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.connect("socket() failed") }
        if var size = receiveBufferBytes.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let sourceAddress {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(sourceAddress)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let reason = String(cString: strerror(errno))
                Glibc.close(fd)
                throw Failure.connect("bind \(sourceAddress): \(reason)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw Failure.connect(reason)
        }
    }

    deinit { if !closed { Glibc.close(fd) } }

    /// A request's bytes: the request line, `Host`, the headers given, and the body with its
    /// `Content-Length` (unless `contentLength` says otherwise, or nil leaves it out).
    public static func request(_ method: String, _ path: String, port: Int, headers: [(String, String)] = [],
                               body: [UInt8] = [], contentLength: Int?? = .none) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        switch contentLength {
        case .none: if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { head += "Content-Length: \(body.count)\r\n" }
        case .some(.some(let length)): head += "Content-Length: \(length)\r\n"
        case .some(.none): break
        }
        return Array((head + "\r\n").utf8) + body
    }

    /// Sends a request and reads its response.
    public func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = [],
                     timeout: Double = 10) throws -> Response {
        write(Self.request(method, path, port: port, headers: headers, body: body))
        return try readResponse(timeout: timeout)
    }

    /// Writes everything (blocking); returns false when the server closed the connection.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Reads one whole response (by `Content-Length`); bytes after it stay for the next.
    /// `headOnly`: the status line and headers only, for an answer with no body (to `HEAD`, a
    /// 304), whatever its `Content-Length` says.
    public func readResponse(timeout: Double = 10, headOnly: Bool = false) throws -> Response {
        let deadline = Date(timeIntervalSinceNow: timeout)
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            end = buffer.firstRange(of: separator)?.lowerBound
            if end == nil { try fill(until: deadline) }
        }
        let head = String(decoding: buffer[..<end!], as: UTF8.self)
        buffer.removeFirst(end! + separator.count)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw Failure.malformed("status line \(statusLine)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw Failure.malformed("header line \(line)") }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if headOnly { return Response(status: status, headers: headers, body: []) }
        guard let length = headers["content-length"].flatMap(Int.init) else { throw Failure.malformed("no Content-Length") }
        while buffer.count < length { try fill(until: deadline) }
        let body = Array(buffer.prefix(length))
        buffer.removeFirst(length)
        return Response(status: status, headers: headers, body: body)
    }

    /// Whether the server closes the connection within `timeout` (reading and dropping what
    /// else it sends).
    public func closedByServer(timeout: Double = 5) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            do { try fill(until: deadline) } catch Failure.closed { return true } catch { return false }
        }
    }

    /// Whether bytes arrive within `timeout` (they stay to be read).
    public func hasData(within timeout: Double) -> Bool {
        if !buffer.isEmpty { return true }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, Int32(timeout * 1000)) > 0
    }

    /// Closes politely (FIN).
    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    /// Closes with a reset, as a crashed peer's kernel would.
    public func abort() {
        guard !closed else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    private func fill(until deadline: Date) throws {
        let remaining = deadline.timeIntervalSinceNow
        guard remaining > 0 else { throw Failure.timeout }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(max(remaining * 1000, 1))) > 0 else { throw Failure.timeout }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw Failure.closed(afterBytes: buffer.count) }
        buffer += chunk.prefix(count)
    }
}
