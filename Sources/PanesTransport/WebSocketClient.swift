internal import CLibWebSockets
import Foundation
import Synchronization

/// A blocking WebSocket client: for tests, tools and the `panes` command itself.
///
/// Sends are queued to the shared client loop; received messages wait in the client until
/// `receive(timeout:)` takes them. Safe to use from one thread at a time per client.
public final class WebSocketClient: @unchecked Sendable {
    public enum Event: Sendable, Equatable {
        case text(String)
        case binary([UInt8])
        /// The connection ended: the close code the server sent, or nil when it sent none.
        case closed(code: UInt16?, reason: String)
    }

    private static let counter = Atomic<UInt64>(0)
    let id: UInt64
    private let condition = NSCondition()
    private var events: [Event] = []
    private var established = false
    private var failure: String?
    private var finished = false
    // Loop-thread state.
    var wsi: OpaquePointer?
    private var outbound: [(bytes: [UInt8], binary: Bool)] = []
    private var closeRequest: (code: UInt16, reason: String)?
    private var inbound: [UInt8] = []
    private var peerCloseCode: UInt16?
    private var peerCloseReason = ""
    /// C strings lws reads during the connect attempt.
    private var connectStrings: [UnsafeMutablePointer<CChar>] = []
    private var userData = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)

    /// Connects and waits for the handshake to finish.
    /// - Parameters:
    ///   - origin: sent as the `Origin` header, to act like a browser page.
    public init(host: String, port: Int, path: String = "/ws", subprotocol: String = "panes.v1",
                origin: String? = nil, timeout: Double = 10) throws {
        id = Self.counter.add(1, ordering: .relaxed).newValue
        userData.pointee = id
        let loop = ClientLoop.shared
        loop.post { [self] in
            loop.clients[id] = self
            var info = lws_client_connect_info()
            info.context = loop.context
            info.address = UnsafePointer(cString(host))
            info.port = Int32(port)
            info.path = UnsafePointer(cString(path))
            info.host = UnsafePointer(cString("\(host):\(port)"))
            // lws writes "Origin: http://" followed by this value, so it takes the origin without its scheme.
            info.origin = origin.map { UnsafePointer(cString($0.hasPrefix("http://") ? String($0.dropFirst(7)) : $0)) } ?? nil
            info.protocol = UnsafePointer(cString(subprotocol))
            info.local_protocol_name = UnsafePointer(cString("panes-client"))
            info.userdata = UnsafeMutableRawPointer(userData)
            if lws_client_connect_via_info(&info) == nil, !isFinished { fail("lws refused the connect") }
        }
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !established && failure == nil && condition.wait(until: deadline) {}
        let outcome = (established, failure)
        condition.unlock()
        if !outcome.0 {
            throw TransportError.connectFailed(outcome.1 ?? "timed out after \(timeout) s")
        }
    }

    deinit {
        userData.deallocate()
        for string in connectStrings { free(string) }
    }

    public func send(_ text: String) { send(Array(text.utf8), binary: false) }

    public func send(_ bytes: [UInt8], binary: Bool) {
        ClientLoop.shared.post { [self] in
            guard let wsi else { return }
            outbound.append((bytes, binary))
            lws_callback_on_writable(wsi)
        }
    }

    /// The next event, or nil if none arrives in time.
    public func receive(timeout: Double = 5) -> Event? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while events.isEmpty {
            if finished || !condition.wait(until: deadline) { break }
        }
        return events.isEmpty ? nil : events.removeFirst()
    }

    /// Sends a close frame with the code and waits for the connection to end.
    public func close(code: UInt16 = 1000, reason: String = "") {
        ClientLoop.shared.post { [self] in
            guard let wsi else { return }
            closeRequest = (code, reason)
            lws_callback_on_writable(wsi)
        }
        waitUntilFinished()
    }

    /// Drops the TCP connection without a close frame, as a crashed tab or a cut cable would.
    public func abort() {
        ClientLoop.shared.post { [self] in
            if let wsi { pws_shutdown_socket(wsi) }
        }
        waitUntilFinished()
    }

    public var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return finished
    }

    private func waitUntilFinished(timeout: Double = 5) {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !finished && condition.wait(until: deadline) {}
        condition.unlock()
    }

    // MARK: Loop thread

    func handle(_ connection: OpaquePointer?, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?,
                _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            wsi = connection
            condition.lock()
            established = true
            condition.broadcast()
            condition.unlock()
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let message = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection error"
            fail(message)
        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard let wsi else { return 0 }
            if let input { inbound.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length)) }
            if pws_message_complete(wsi) != 0 {
                let event: Event = lws_frame_is_binary(wsi) != 0
                    ? .binary(inbound) : .text(String(decoding: inbound, as: UTF8.self))
                inbound = []
                deliver(event)
            }
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let input, length >= 2 {
                let bytes = UnsafeRawBufferPointer(start: input, count: length)
                peerCloseCode = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
                peerCloseReason = String(decoding: bytes.dropFirst(2), as: UTF8.self)
            }
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            guard let wsi else { return 0 }
            if let close = closeRequest {
                var reason = Array(close.reason.utf8)
                reason.withUnsafeMutableBufferPointer {
                    lws_close_reason(wsi, lws_close_status(rawValue: UInt32(close.code)), $0.baseAddress, $0.count)
                }
                return -1
            }
            guard !outbound.isEmpty else { return 0 }
            let next = outbound.removeFirst()
            var frame = [UInt8](repeating: 0, count: Int(pws_pre())) + next.bytes
            let written = frame.withUnsafeMutableBufferPointer {
                lws_write(wsi, $0.baseAddress! + Int(pws_pre()), next.bytes.count, next.binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT)
            }
            if written < next.bytes.count { return -1 }
            if !outbound.isEmpty { lws_callback_on_writable(wsi) }
        case LWS_CALLBACK_CLIENT_CLOSED:
            ClientLoop.shared.clients[id] = nil
            wsi = nil
            deliver(.closed(code: peerCloseCode, reason: peerCloseReason), finishing: true)
        default:
            break
        }
        return 0
    }

    private func deliver(_ event: Event, finishing: Bool = false) {
        condition.lock()
        events.append(event)
        if finishing { finished = true }
        condition.broadcast()
        condition.unlock()
    }

    private func fail(_ message: String) {
        ClientLoop.shared.clients[id] = nil
        wsi = nil
        condition.lock()
        failure = message
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    private func cString(_ string: String) -> UnsafeMutablePointer<CChar> {
        let pointer = strdup(string)!
        connectStrings.append(pointer)
        return pointer
    }
}
