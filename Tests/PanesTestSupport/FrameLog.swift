// Threading model: clients record from the test's thread (what they send) and from their reader
// thread (what they receive); one lock serialises the writes to the file, so lines never mix.
import Foundation
import Synchronization
import Testing

/// Records every protocol message the test clients send and receive, for
/// `scripts/check_frames.py` to validate against PROTOCOL.schema.json. On only when
/// `PANES_FRAME_LOG` names a folder: each test process appends JSON lines to its own
/// `swift-PID.jsonl` there, one line per text message:
/// `{"direction": "sent"|"received", "connection": "swift-PID-7", "test": "…", "text": "…"}`.
public final class FrameLog: Sendable {
    /// The log of this process, or nil when `PANES_FRAME_LOG` is not set.
    public static let shared: FrameLog? = ProcessInfo.processInfo.environment["PANES_FRAME_LOG"].flatMap { folder in
        folder.isEmpty ? nil : FrameLog(folder: folder)
    }

    public enum Direction: String, Sendable {
        /// From the client to the server.
        case sent
        /// From the server to the client.
        case received
    }

    /// One client's connection: which test opened it, so a bad frame can be traced to its test.
    public struct Connection: Sendable {
        let log: FrameLog
        public let id: String
        public let test: String

        public func record(_ direction: Direction, _ text: String) {
            log.write(["direction": direction.rawValue, "connection": id, "test": test, "text": text])
        }
    }

    private let handle: Mutex<FileHandle?>
    private let counter = Mutex(0)

    private init?(folder: String) {
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = "\(folder)/swift-\(getpid()).jsonl"
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path)
        else { return nil }
        handle = Mutex(file)
    }

    /// A new connection, named after the test running on the calling task (Swift Testing's
    /// current test), or after the process when there is none.
    public func connection() -> Connection {
        let number = counter.withLock { value in
            value += 1
            return value
        }
        let test = Test.current.map { "\($0.id)" } ?? "(no test)"
        return Connection(log: self, id: "swift-\(getpid())-\(number)", test: test)
    }

    private func write(_ fields: [String: String]) {
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
        handle.withLock { file in
            file?.write(data + Data([0x0A]))
        }
    }
}

/// Puts a text message sent in several frames back together, so the log holds whole messages.
struct MessageAssembler {
    private var partial: [UInt8]?

    /// The whole message once `frame` completes one, for text messages; nil otherwise.
    mutating func add(_ frame: WebSocketFrame) -> String? {
        switch frame.kind {
        case .text?:
            partial = frame.payload
        case .continuation?:
            guard partial != nil else { return nil }
            partial! += frame.payload
        case .binary?:
            partial = nil
            return nil
        default:
            return nil
        }
        guard frame.fin, let message = partial else { return nil }
        partial = nil
        return String(decoding: message, as: UTF8.self)
    }
}
