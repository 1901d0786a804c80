// Threading model: the harness starts a `WebSocketServer` on its own thread, which becomes the
// service thread; `Recorder` (the delegate) is called there and keeps what it saw behind a
// condition the test's thread waits on. `onServiceThread` runs a closure there and waits.
import Foundation
public import PanesTransport

/// The transport alone, in process, on port 0: for tests of what only the transport can be
/// asked directly (flow control, wake-ups, idle detection) without the hub in between.
public final class TransportHarness: @unchecked Sendable {
    public let server: WebSocketServer
    public let recorder = Recorder()
    private let finished = DispatchSemaphore(value: 0)

    public var port: Int { server.port }

    public init(configuration: TransportConfiguration) throws {
        var configuration = configuration
        configuration.port = 0
        server = WebSocketServer(configuration: configuration)
        server.delegate = recorder
        recorder.server = server
        let started = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: (any Error)?
        let thread = Thread { [server, finished] in
            do {
                try server.start()
            } catch {
                failure = error
                started.signal()
                finished.signal()
                return
            }
            started.signal()
            server.run()
            finished.signal()
        }
        thread.name = "transport-harness"
        thread.start()
        started.wait()
        if let failure { throw failure }
    }

    deinit {
        server.stop()
        finished.wait()
    }

    /// Runs `work` on the service thread and returns its result.
    public func onServiceThread<T: Sendable>(_ work: @escaping @Sendable (WebSocketServer) -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: T?
        server.post { [server] in
            result = work(server)
            done.signal()
        }
        done.wait()
        return result!
    }

    public func client(_ options: WebSocketClient.Options = .init()) throws -> WebSocketClient {
        var options = options
        options.recordsFrames = false  // the bare transport does not speak panes.v1
        return try WebSocketClient(port: port, options: options)
    }
}

/// What the server reported, in order.
public final class Recorder: WebSocketServerDelegate, @unchecked Sendable {
    public struct State: Sendable {
        public var opened: [UInt64] = []
        /// The peer each connection in `opened` was reported with.
        public var openedPeers: [String?] = []
        public var messages: [(connection: UInt64, text: String)] = []
        public var closed: [(connection: UInt64, abnormal: Bool)] = []
        public var pongs: [UInt64] = []
        public var wakes: [UInt64] = []
        /// API requests handed over, in order.
        public var httpRequests: [HTTPRequest] = []
        /// Refusals the transport asked a body for.
        public var refusals: [HTTPRefusal] = []
        /// Requests the transport gave up on (timed out, connection closed).
        public var abandoned: [UInt64] = []
        /// The peers asked about at accept (`serverClosesAtAccept`) and at each WebSocket
        /// upgrade (`serverRetryAfter`), in order.
        public var askedAtAccept: [String] = []
        public var askedAtUpgrade: [String] = []
        /// `serverWillWait` calls so far.
        public var willWaits = 0
    }

    /// How API requests are answered: called on the service thread with each request; a
    /// response is written at once, nil leaves the request for the test to answer (with
    /// `WebSocketServer.respond`) or to time out. By default each is echoed back.
    public var answer: @Sendable (HTTPRequest) -> HTTPResponse? = Recorder.echo
    /// The text a WebSocket message is answered with, sent from inside `serverDidReceive` as a
    /// reply is; nil (the default) answers nothing. Set before any client connects.
    public var reply: @Sendable (String) -> String? = { _ in nil }
    /// Whether each message received asks for `serverWillWait` (`notifyBeforeWaiting`), as the
    /// runtime does after each event it performs. Set before any client connects.
    public var notifiesOnMessage = false
    /// Whether each wake-up (`serverDidWake`, a timer's work) asks for `serverWillWait`, as the
    /// runtime's does when it performs. Set before the first wake-up.
    public var notifiesOnWake = false
    /// Whether a connection from this peer is closed at accept; none by default.
    public var closesAtAccept: @Sendable (String) -> Bool = { _ in false }
    weak var server: WebSocketServer?

    /// 200 with a JSON object describing the request: method, path, query, headers, body.
    public static let echo: @Sendable (HTTPRequest) -> HTTPResponse? = { request in
        func quoted(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        let query = request.query.map { "[\(quoted($0.name)),\(quoted($0.value))]" }.joined(separator: ",")
        let headers = request.headers.sorted { $0.key < $1.key }.map { "\(quoted($0.key)):\(quoted($0.value))" }.joined(separator: ",")
        let json = "{\"method\":\(quoted(request.method.rawValue)),\"path\":\(quoted(request.path)),\"query\":[\(query)],"
            + "\"headers\":{\(headers)},\"bodyBytes\":\(request.body.count),\"bodySHA1\":\"\(SHA1.hex(request.body))\"}"
        return .json(200, Array(json.utf8))
    }

    private let condition = NSCondition()
    private var state = State()

    public var snapshot: State {
        condition.lock()
        defer { condition.unlock() }
        return state
    }

    /// Waits until `predicate` holds (true) or `timeout` seconds pass (false).
    @discardableResult
    public func wait(timeout: Double = 10, until predicate: (State) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(state) {
            if !condition.wait(until: deadline) { return predicate(state) }
        }
        return true
    }

    private func record(_ change: (inout State) -> Void) {
        condition.lock()
        change(&state)
        condition.broadcast()
        condition.unlock()
    }

    public func serverDidOpen(_ connection: UInt64, peer: String?) {
        record {
            $0.opened.append(connection)
            $0.openedPeers.append(peer)
        }
    }

    public func serverDidReceive(_ message: UnsafeRawBufferPointer, from connection: UInt64) {
        let text = String(decoding: message, as: UTF8.self)
        record { $0.messages.append((connection, text)) }
        if notifiesOnMessage { server?.notifyBeforeWaiting() }
        if let answer = reply(text) {
            server?.send(OutboundFrame(headroomAndPayload: [UInt8](repeating: 0, count: OutboundFrame.headroom) + Array(answer.utf8),
                                       binary: false), to: connection)
        }
    }

    public func serverDidClose(_ connection: UInt64, abnormal: Bool) {
        record { $0.closed.append((connection, abnormal)) }
    }

    public func serverDidReceivePong(from connection: UInt64) { record { $0.pongs.append(connection) } }

    public func serverDidWake() {
        record { $0.wakes.append(WebSocketServer.monotonicMilliseconds()) }
        if notifiesOnWake { server?.notifyBeforeWaiting() }
    }

    public func serverWillWait() { record { $0.willWaits += 1 } }

    public func serverDidReceiveTerminationSignal() {}

    public func serverHTTPResponse(for path: String) -> HTTPResponse? {
        path == "/healthz" ? HTTPResponse(body: "ok\n") : nil
    }

    public func serverDidReceiveHTTPRequest(_ request: HTTPRequest) {
        record { $0.httpRequests.append(request) }
        if let response = answer(request) { server?.respond(to: request.id, with: response) }
    }

    public func serverHTTPRefusalResponse(_ refusal: HTTPRefusal) -> HTTPResponse {
        record { $0.refusals.append(refusal) }
        return .json(refusal.status, Array("{\"refused\":\(refusal.status)}".utf8))
    }

    public func serverHTTPRequestAbandoned(_ id: UInt64) { record { $0.abandoned.append(id) } }

    public func serverClosesAtAccept(peer: String) -> Bool {
        record { $0.askedAtAccept.append(peer) }
        return closesAtAccept(peer)
    }

    public func serverRetryAfter(forPeer peer: String) -> Int? {
        record { $0.askedAtUpgrade.append(peer) }
        return nil
    }
}
