package import Foundation
package import PanesCore
import PanesJSON
package import PanesPostgresTestSupport
package import PanesTestSupport
import Testing

/// The stores the end-to-end suites run the real binary on: SQLite, and PostgreSQL (a fresh
/// database per test on `PANES_TEST_POSTGRES`, which scripts/test sets; unset, those cases
/// fail saying so, and `PANES_TEST_POSTGRES=skip` leaves them out on purpose).
package enum TestStore: String, CustomStringConvertible, Sendable {
    case sqlite
    case postgres

    package var description: String { rawValue }

    package static var endToEnd: [TestStore] {
        TestDatabase.isSkipped ? [.sqlite] : [.sqlite, .postgres]
    }
}

/// The real `panes` binary on an ephemeral port, with its own data folder (and, on
/// PostgreSQL, its own database).
package final class ServerProcess: @unchecked Sendable {
    package let process = Process()
    package let data: URL
    package private(set) var port = 0
    private let output = Pipe()
    package let errors = Pipe()
    package let arguments: [String]
    package let store: TestStore
    /// The PostgreSQL database, shared with restarted servers; dropped with the last of them.
    package let database: TestDatabase?
    /// What the server has written to stderr so far, read as it comes (a server whose stderr
    /// pipe filled up would block).
    package var log: String { stderr.text }
    private let stderr = StreamedText()

    package static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("panes")
    }

    package static func tempFolder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("panes-test-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Starts a server. `config` becomes the configuration file; `data` reuses a folder (restart);
    /// `environment` is added to the tests' own.
    package init(store: TestStore = .sqlite, config: JSONValue? = nil, data: URL? = nil, database: TestDatabase? = nil,
         extra: [String] = [], environment: [String: String] = [:]) throws {
        self.data = data ?? Self.tempFolder()
        self.store = store
        var arguments = ["serve", "--port", "0", "--data", self.data.path, "--log-level", "warning"] + extra
        switch store {
        case .sqlite:
            self.database = nil
        case .postgres:
            let database = try database ?? TestDatabase()
            self.database = database
            arguments += ["--store", database.url]
        }
        if let config {
            let file = self.data.appendingPathComponent("config.json")
            try Data(JSONCodec.encode(config)).write(to: file)
            arguments += ["--config", file.path]
        }
        self.arguments = arguments
        process.executableURL = Self.binary
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        stderr.follow(errors.fileHandleForReading)
        // The banner line carries the port.
        var buffer = Data()
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer += chunk
            if let line = String(data: buffer, encoding: .utf8), let range = line.range(of: "127.0.0.1:") {
                let digits = line[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits), line.contains("\n") {
                    self.port = port
                    banner = line
                    return
                }
            }
        }
        process.terminate()
        // Its last words (why it stopped) are read on another thread: all of them, before
        // they are handed over (read at once, a loaded machine gave 1 run in 6 an empty log).
        process.waitUntilExit()
        stderr.waitForEnd()
        throw ServerProcessError.didNotStart(stderr.text)
    }

    /// The line the server printed when it started listening.
    package private(set) var banner = ""

    /// Waits until the server's stderr contains `text`.
    package func waitForLog(_ text: String, timeout: Double = 30) -> Bool {
        stderr.wait(for: text, timeout: timeout)
    }

    /// Starts another server on the same data folder, for restart tests.
    /// - Parameter extra: options for the new server (an auth mode and its files, say).
    package func restarted(config: JSONValue? = nil, extra: [String] = []) throws -> ServerProcess {
        try ServerProcess(store: store, config: config, data: data, database: database, extra: extra)
    }

    package func client(origin: String? = nil) throws -> TestClient {
        try TestClient(WebSocketClient(port: port, options: .init(origin: origin)))
    }

    package func kill(_ signal: Int32 = SIGKILL) {
        Foundation.kill(process.processIdentifier, signal)
    }

    /// Waits for exit and returns the status.
    @discardableResult
    package func wait() -> Int32 {
        process.waitUntilExit()
        stderr.waitForEnd()
        return process.terminationStatus
    }

    package func http(_ path: String) throws -> (status: Int, body: String) {
        try Self.http(port: port, path)
    }

    /// A GET on the loopback server at `port`, with curl, sending `headers` as given.
    package static func http(port: Int, _ path: String, headers: [String: String] = [:]) throws -> (status: Int, body: String) {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "-o", "-", "-w", "\n%{http_code}"] + headers.flatMap {
            // curl drops a header given with an empty value unless it is written `Name;`.
            ["-H", $0.value.isEmpty ? "\($0.key);" : "\($0.key): \($0.value)"]
        }
            + ["http://127.0.0.1:\(port)\(path)"]
        let pipe = Pipe()
        curl.standardOutput = pipe
        try curl.run()
        let text = String(data: pipe.fileHandleForReading.readDataToEndOfFile(), encoding: .utf8) ?? ""
        curl.waitUntilExit()
        let status = Int(text.split(separator: "\n").last ?? "") ?? 0
        return (status, String(text.dropLast(String(status).count + 1)))
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: data)
    }
}

/// Text from a pipe, collected on a thread of its own as it arrives.
package final class StreamedText: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var ended = false

    package var text: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    package func follow(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                condition.lock()
                if chunk.isEmpty { ended = true } else { data += chunk }
                condition.broadcast()
                condition.unlock()
                if chunk.isEmpty { return }
            }
        }
    }

    /// Waits until `needle` has appeared (true) or `timeout` seconds passed or the pipe ended.
    package func wait(for needle: String, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !String(decoding: data, as: UTF8.self).contains(needle) {
            if ended || !condition.wait(until: deadline) { return String(decoding: data, as: UTF8.self).contains(needle) }
        }
        return true
    }

    package func waitForEnd() {
        let deadline = Date(timeIntervalSinceNow: 10)
        condition.lock()
        while !ended && condition.wait(until: deadline) {}
        condition.unlock()
    }
}

package enum ServerProcessError: Error {
    case didNotStart(String)
}

/// A Panes client over a real socket: requests wait for their reply, events are buffered.
package final class TestClient: @unchecked Sendable {
    package let socket: WebSocketClient
    private var nextID: Int64 = 0
    private var buffered: [JSONValue] = []
    /// Set when the connection ended: the server's close code.
    package private(set) var closeCode: UInt16??

    package init(_ socket: WebSocketClient) {
        self.socket = socket
    }

    package func sendRaw(_ text: String) { socket.send(text) }

    /// Sends a request and waits for its reply (events that arrive meanwhile are kept).
    package func request(_ type: String, _ fields: JSONObject = [:], timeout: Double = 10) -> JSONValue {
        nextID += 1
        let id = nextID
        var object = fields
        object["type"] = .string(type)
        object["id"] = .int(id)
        socket.send(JSONCodec.encodeString(.object(object)))
        return next(timeout: timeout) { $0["type"] == "reply" && $0["re"] == .int(id) } ?? .null
    }

    /// Connects as a scene and returns the result.
    package func connect(_ fields: JSONObject = [:], name: String = "alice") -> JSONValue {
        var object: JSONObject = ["protocol": 1, "auth": ["name": .string(name)], "client": "swift-tests"]
        object.merge(fields) { _, new in new }
        let reply = request("connect", object)
        #expect(reply["ok"] == true, "connect failed: \(reply)")
        return reply["result"] ?? .null
    }

    package func event(_ name: String, timeout: Double = 10) -> JSONValue? {
        next(timeout: timeout) { $0["type"] == .string(name) }
    }

    /// The next message matching, from the buffer or the socket.
    package func next(timeout: Double = 10, where matches: (JSONValue) -> Bool) -> JSONValue? {
        if let index = buffered.firstIndex(where: matches) { return buffered.remove(at: index) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            switch socket.receive(timeout: deadline.timeIntervalSinceNow) {
            case .text(let text)?:
                guard case .success(let json) = JSONCodec.decode(text) else { continue }
                if matches(json) { return json }
                buffered.append(json)
            case .closed(let code, _)?:
                closeCode = .some(code)
                return nil
            case .binary?:
                continue
            case nil:
                return nil
            }
        }
        return nil
    }

    /// Waits for the server to close the connection and returns its close code.
    package func waitForClose(timeout: Double = 10) -> UInt16? {
        if let closeCode { return closeCode }
        _ = next(timeout: timeout) { _ in false }
        return closeCode ?? nil
    }

    package static func credentials(_ result: JSONValue) -> JSONValue {
        ["id": result["session"]?["persistentIdentifier"] ?? .null, "secret": result["session"]?["secret"] ?? .null]
    }
}
