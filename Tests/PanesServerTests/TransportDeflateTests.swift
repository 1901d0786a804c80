import Foundation
import PanesCore
import PanesServerTestSupport
import Testing

/// permessage-deflate on and off, on both event loops, with Python's `websockets` as the peer
/// (Tests/peers/deflate_peer.py). lws's libuv loop is known to stall ~20 s on compressed
/// messages over ~4 KiB; these keep large compressed messages, both ways and many in a row,
/// from regressing on the loops Panes offers.
@Suite struct TransportDeflateTests {
    static let config: JSONValue = ["settings": ["maxUserInfoBytes": 1_048_576, "maxMessageBytes": 1_048_576]]

    @Test(arguments: ["libev", "poll"])
    func largeCompressedMessagesGoBothWays(_ loop: String) throws {
        let server = try ServerProcess(config: Self.config, extra: ["--store", "memory", "--deflate", "--event-loop", loop])
        let result = try Self.peer(port: server.port, mode: "large")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains(#""deflate": true"#), "permessage-deflate was negotiated: \(result.output)")
        #expect(result.output.contains(#""replies": 22"#))
    }

    @Test func withoutDeflateTheSameMessagesGoUncompressed() throws {
        let server = try ServerProcess(config: Self.config, extra: ["--store", "memory"])
        let result = try Self.peer(port: server.port, mode: "large")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains(#""deflate": false"#), "the server did not offer permessage-deflate")
    }

    @Test func aCompressedTextFrameThatIsNotUTF8ClosesWith1007() throws {
        let server = try ServerProcess(extra: ["--store", "memory", "--deflate"])
        let result = try Self.peer(port: server.port, mode: "invalid-utf8")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains(#""deflate": true"#))
    }

    @Test func aCompressedMessageThatInflatesPastTheLimitClosesWith1009() throws {
        let server = try ServerProcess(extra: ["--store", "memory", "--deflate"])
        let result = try Self.peer(port: server.port, mode: "oversize")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains(#""deflate": true"#))
    }

    static func peer(port: Int, mode: String) throws -> (status: Int32, output: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../peers/deflate_peer.py").standardizedFileURL.path
        let process = Process()
        // The python3 on PATH: the one scripts/test installed `websockets` for.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, String(port), mode]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(data: output.fileHandleForReading.readDataToEndOfFile(), encoding: .utf8) ?? ""
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
