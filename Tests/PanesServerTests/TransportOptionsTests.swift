import Foundation
import PanesCore
import PanesJSON
import PanesServerTestSupport
import PanesTestSupport
import PanesTransport
import Testing

/// A bad `serve` option or configuration value stops the start with a message saying what
/// was wrong; nothing falls back to a default silently (issue 13, item 11).
@Suite struct TransportOptionsTests {
    @Test(arguments: [
        (["--log-level", "loud"], "invalid for '--log-level <log-level>'. Please provide one of the following:\n  - trace\n  - debug\n  - info\n  - notice\n  - warning\n  - error\n  - critical"),
        (["--event-loop", "uv"], "invalid for '--event-loop <event-loop>'. Please provide one of 'poll' and 'libev'."),
        (["--port", "70000"], "--port must be from 0 to 65535"),
        (["--port=-1"], "--port must be from 0 to 65535"),
        (["--store", "disk"], "invalid for '--store <store>'"),
        (["--sync", "sometimes"], "invalid for '--sync <sync>'"),
        (["--sync", "normal"], "--sync normal applies to the SQLite store only"),
        (["--host", ""], "--host must name an address"),
        (["--auth", "trust-me"], "--auth"),
        (["--host", "0.0.0.0"], "--auth open lets anyone"),
        (["--host", "::1"], "--host ::1 is not an IPv4 address"),
        (["--host", "localhost"], "--host localhost is not an IPv4 address"),
        (["--host", "127.0.0.256"], "is not an IPv4 address"),
        (["--host", "127.1"], "is not an IPv4 address"),
        (["--host", "127.0.0.01"], "--host 127.0.0.01 is not an IPv4 address"),
        (["--host", "1.2.3"], "--host 1.2.3 is not an IPv4 address"),
        (["--host", " 127.0.0.1"], "is not an IPv4 address"),
        (["--host", "192.168.1.10", "--auth", "open"], "--auth tokens --tokens FILE, or --auth jwt"),
        (["--tokens", "tokens.json"], "--tokens is read only with --auth tokens"),
        (["--auth", "tokens"], "--auth tokens needs --tokens FILE"),
        (["--web", "/nonexistent"], "--web /nonexistent is not a folder with an index.html"),
        (["--allowed-origin", "localhost:3000"], "--allowed-origin localhost:3000 is not an origin"),
        (["--allow-origin", "http://localhost:3000/app"], "is not an origin"),
        (["--allowed-origin", "null"], "is not an origin"),
        (["--public-url", "ftp://files.example"], "--public-url ftp://files.example is not an http or https URL"),
        (["--config", "/nonexistent.json"], "cannot read the configuration file /nonexistent.json"),
    ] as [([String], String)])
    func aBadOptionRefusesToStart(_ arguments: [String], _ message: String) throws {
        let (status, output) = try Self.serve(arguments)
        #expect(status != 0)
        #expect(output.contains(message), "\(output)")
    }

    static let badConfigurations: [(JSONValue, String)] = [
        (["allowedOrigins": ["null"]], "allowedOrigins[0]"),
        (["allowedOrigins": ["http://localhost:3000", "localhost:4000"]], "allowedOrigins[1]"),
        (["allowedOrigins": [3000]], "allowedOrigins[0]"),
        (["settings": ["idlePingMs": 10]], "settings.idlePingMs"),
        (["settings": ["maxOutboundQueue": "many"]], "settings.maxOutboundQueue"),
        (["settings": ["tickMs": 100]], "settings.tickMs"),
        (["origins": []], "origins"),
    ]

    @Test(arguments: badConfigurations)
    func aBadConfigurationValueRefusesToStart(_ config: JSONValue, _ field: String) throws {
        let folder = ServerProcess.tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("config.json")
        try Data(JSONCodec.encode(config)).write(to: file)
        let (status, output) = try Self.serve(["--config", file.path])
        #expect(status != 0)
        #expect(output.contains(field), "\(output)")
    }

    /// lws, unable to bind an address this machine does not have, would start without a
    /// listening socket (and keep trying); the server stops instead of saying it serves, with a
    /// port it picks (`--port 0`) as with one given.
    @Test(arguments: [0, 8_080])
    func anAddressThisMachineDoesNotHaveRefusesToStart(_ port: Int) throws {
        let folder = ServerProcess.tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokens = folder.appendingPathComponent("tokens.json")
        try Data(#"{"tokens": []}"#.utf8).write(to: tokens)
        let (status, output) = try Self.serve(["--host", "192.0.2.1", "--port", "\(port)", "--auth", "tokens",
                                               "--tokens", tokens.path])
        #expect(status != 0)
        #expect(output.contains("could not listen on 192.0.2.1:\(port): Cannot assign requested address"), "\(output)")
    }

    /// A port another listener holds stops the start with the address, the port and why, on
    /// either event loop (on libev it was told as "could not start on libev … or could not listen").
    @Test(arguments: ["libev", "poll"])
    func aPortAnotherListenerHoldsRefusesToStart(_ eventLoop: String) throws {
        let holder = try TransportHarness(configuration: TransportConfiguration())
        let (status, output) = try Self.serve(["--port", "\(holder.port)", "--event-loop", eventLoop])
        #expect(status != 0)
        #expect(output.contains("could not listen on 127.0.0.1:\(holder.port): Address already in use"), "\(output)")
        #expect(!output.contains("libev"), "\(output)")
        withExtendedLifetime(holder) {}
    }

    /// Runs `panes serve` with a fresh data folder; it must exit by itself (a bad option).
    static func serve(_ arguments: [String]) throws -> (Int32, String) {
        let folder = ServerProcess.tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = ["serve", "--port", "0", "--data", folder.path, "--store", "memory"] + arguments
        process.currentDirectoryURL = folder
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date(timeIntervalSinceNow: 20)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return (0, "still running: the option was accepted")
        }
        let text = String(data: output.fileHandleForReading.readDataToEndOfFile(), encoding: .utf8) ?? ""
        return (process.terminationStatus, text)
    }
}
