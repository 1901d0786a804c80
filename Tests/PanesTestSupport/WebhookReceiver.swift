// Threading: the test's thread drives it; the receiver is a separate process
// (Tests/peers/webhook_receiver.py) whose log file is read on demand.
public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A webhook receiver the tests start: a Python HTTP server that checks every delivery's
/// signature with Python's own `hmac`, answers as planned, and logs what it got to a file that
/// outlives it, so it can be stopped ("down for a while") and started again on its port.
public final class WebhookReceiver: @unchecked Sendable {
    /// One request as the receiver saw it, in arrival order.
    public struct Receipt: Sendable {
        public let path: String
        public let id: String
        public let timestamp: String
        /// Python's hmac agreed with `webhook-signature`.
        public let signatureValid: Bool
        public let contentType: String
        public let body: String
        public let receivedAt: Double

        /// The body's JSON (the event), or an empty object.
        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
        public var type: String? { json["type"] as? String }
        public var data: [String: Any] { json["data"] as? [String: Any] ?? [:] }
        /// `data.revisions.from ... to`, for document changes.
        public var revisions: ClosedRange<Int>? {
            guard let range = data["revisions"] as? [String: Any], let from = range["from"] as? Int, let to = range["to"] as? Int else { return nil }
            return from...to
        }
    }

    public let secret: String
    public private(set) var port: Int
    public let log: URL
    private let tls: (cert: String, key: String)?
    private var process: Process?

    public static var script: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../peers/webhook_receiver.py")
            .standardizedFileURL
    }

    /// Starts a receiver on a free port (or `port`).
    public init(secret: String, port: Int = 0, tls: (cert: String, key: String)? = nil) throws {
        self.secret = secret
        self.port = port
        self.tls = tls
        log = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-receiver-\(UUID().uuidString).jsonl")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: log)
    }

    public func url(_ path: String) -> String { "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)\(path)" }

    /// Starts it again after `stop`, on the same port.
    public func start() throws {
        guard process == nil else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", Self.script.path, "--secret", secret, "--log", log.path, "--port", String(port)]
        if let tls { arguments += ["--tls", tls.cert, tls.key] }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // "listening PORT", once it accepts connections.
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) { line += byte }
        guard let text = String(data: line, encoding: .utf8), text.hasPrefix("listening "), let chosen = Int(text.dropFirst(10)) else {
            process.terminate()
            throw WebhookReceiverError("the receiver did not start (\(String(decoding: line, as: UTF8.self)))")
        }
        port = chosen
        self.process = process
    }

    /// Stops it at once (connections refused from now on, until `start`).
    public func stop() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// How requests for `path` (or for one webhook `id`) are answered, in turn, then `fallback`:
    /// each action `["status": 500]`, `["status": 200, "delay_ms": 800]`,
    /// `["status": 302, "location": "/x"]`, `["status": 429, "retry_after": 1]`, `["body_bytes": n]`.
    public func plan(path: String? = nil, id: String? = nil, _ actions: [[String: Int]], fallback: [String: Int]? = nil,
                     location: String? = nil) throws {
        var plan: [String: Any] = ["actions": actions.map { action -> [String: Any] in
            var entry: [String: Any] = action
            if let location { entry["location"] = location }
            return entry
        }]
        if let path { plan["path"] = path }
        if let id { plan["id"] = id }
        if let fallback { plan["default"] = fallback }
        let body = try JSONSerialization.data(withJSONObject: plan)
        _ = try control("POST", "/_plan", body: [UInt8](body))
    }

    /// The most deliveries to `path` the receiver was answering at once.
    public func maxInFlight(_ path: String) throws -> Int {
        let stats = try JSONSerialization.jsonObject(with: Data(control("GET", "/_stats", body: []))) as? [String: [String: Int]]
        return stats?[path]?["max_in_flight"] ?? 0
    }

    /// Everything received so far, in arrival order (across restarts).
    public var receipts: [Receipt] {
        guard let data = FileManager.default.contents(atPath: log.path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return Receipt(path: object["path"] as? String ?? "", id: object["id"] as? String ?? "",
                           timestamp: object["timestamp"] as? String ?? "", signatureValid: object["signature_valid"] as? Bool ?? false,
                           contentType: object["content_type"] as? String ?? "", body: object["body"] as? String ?? "",
                           receivedAt: object["received_at"] as? Double ?? 0)
        }
    }

    /// Waits until `condition` holds for the receipts (true) or `timeout` passes (false).
    @discardableResult
    public func wait(timeout: Double = 20, until condition: ([Receipt]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if condition(receipts) { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition(receipts)
    }

    private func control(_ method: String, _ path: String, body: [UInt8]) throws -> [UInt8] {
        guard tls == nil else { throw WebhookReceiverError("control requests go to a plain-HTTP receiver only") }
        let client = try HTTPClient(port: port)
        return try client.send(method, path, body: body).body
    }
}

public struct WebhookReceiverError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
