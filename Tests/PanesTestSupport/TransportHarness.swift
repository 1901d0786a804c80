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
        public var messages: [(connection: UInt64, text: String)] = []
        public var closed: [(connection: UInt64, abnormal: Bool)] = []
        public var pongs: [UInt64] = []
        public var wakes: [UInt64] = []
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

    public func serverDidOpen(_ connection: UInt64) { record { $0.opened.append(connection) } }

    public func serverDidReceive(_ message: UnsafeRawBufferPointer, from connection: UInt64) {
        let text = String(decoding: message, as: UTF8.self)
        record { $0.messages.append((connection, text)) }
    }

    public func serverDidClose(_ connection: UInt64, abnormal: Bool) {
        record { $0.closed.append((connection, abnormal)) }
    }

    public func serverDidReceivePong(from connection: UInt64) { record { $0.pongs.append(connection) } }

    public func serverDidWake() { record { $0.wakes.append(WebSocketServer.monotonicMilliseconds()) } }

    public func serverDidReceiveTerminationSignal() {}

    public func serverHTTPResponse(for path: String) -> HTTPResponse? {
        path == "/healthz" ? HTTPResponse(body: "ok\n") : nil
    }
}
