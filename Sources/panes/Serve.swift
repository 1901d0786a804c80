import ArgumentParser
import Foundation
import Logging
import PanesCore
import PanesJSON
import PanesPostgres
import PanesSecurity
import PanesServer
import PanesStorage
import PanesTransport
import PanesWebhooks

/// `panes serve`: runs the server until SIGTERM, then drains and exits 0.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server.")

    enum AuthMode: String, ExpressibleByArgument { case open, tokens, jwt }
    enum Sync: String, ExpressibleByArgument { case full, normal }

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on; 0 picks a free one (printed on start).") var port = 8080
    @Option(help: "Folder for the SQLite database (created if missing).") var data = "data"
    @Option(help: "Where state is kept: sqlite (durable, one node), memory (tests, benchmarks), or a PostgreSQL URL postgres://user:password@host:port/database (nodes sharing it). Default: $PANES_STORE, else sqlite.")
    var store: StoreLocation?
    @Option(help: "SQLite synchronous mode: full (default) survives power loss, normal survives a crashed process.")
    var sync: Sync?
    @Option(help: "Configuration file (JSON): settings, scene configurations, preference defaults, origins.")
    var config: String?
    @Option(help: "open: any display name, any workspace. tokens: only tokens listed in --tokens. jwt: tokens your app signs, checked with the keys in --jwt-keys.")
    var auth = AuthMode.open
    @Option(help: "Tokens file (JSON) for --auth tokens.") var tokens: String?
    @Option(help: "Key file (JSON) for --auth jwt: issuer, audience and keys (HS256 secrets, RS256/ES256 public keys), each with a kid.")
    var jwtKeys: String?
    @Option(help: "API keys file (JSON) for the HTTP API under /api/v1: each key's SHA-256, workspaces and access (`panes apikey create` makes one). Read again on SIGHUP. Without it the API answers every request 401.")
    var apiKeys: String?
    @Option(help: "Folder served at / (the browser client).") var web: String?
    @Option(name: [.customLong("allowed-origin"), .customLong("allow-origin")],
            help: "A browser origin (scheme://host[:port]) allowed besides the server's own (repeatable).")
    var allowedOrigins: [String] = []
    @Option(help: "Where browsers reach the server, e.g. https://panes.example.com (default: http://HOST:PORT).")
    var publicURL: String?
    @Option(help: "A proxy (IP address) whose X-Forwarded-For names the client, for the limit on failed authentications per address (repeatable). Without one, every client behind a proxy counts as the proxy.")
    var trustedProxy: [String] = []
    @Flag(help: "Offer permessage-deflate (costs memory and CPU per connection).") var deflate = false
    @Option(help: "Event loop: libev (epoll) or poll (lws's own; for comparison).") var eventLoop = EventLoop.libev
    @Option(help: "Log level.") var logLevel = Logger.Level.info

    func run() throws {
        try checkTransportOptions()
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "panes")

        var configuration = ServerConfiguration()
        if let config { configuration = try ServerConfiguration(json: readJSON(config, what: "configuration")) }
        let authenticator = try makeAuthenticator(settings: configuration.settings, logger: logger)

        let store = try StoreLocation.resolve(self.store, environment: ProcessInfo.processInfo.environment)
        let backing: any Store
        var cluster: ClusterNode?
        switch store {
        case .postgres(let url):
            do {
                let postgres = try PostgresStore(url: url)
                backing = postgres
                // A node of a cluster: the heartbeat has a lease-only handle on a connection of
                // its own, and the listener a connection too, so neither waits behind the store
                // thread's commits. The listener drops what the node's store notified itself.
                cluster = ClusterNode(node: ClusterNode.makeID(), leases: try PostgresLeases(url: url),
                                      listener: try PostgresListener(url: url, ownOrigin: postgres.noticeOrigin),
                                      leaseMs: configuration.settings.nodeLeaseMs,
                                      heartbeatMs: configuration.settings.nodeHeartbeatMs, logger: logger)
            } catch {
                throw ValidationError("cannot open the PostgreSQL store \(store.display): \(error)")
            }
        case .memory:
            backing = MemoryStore()
        case .sqlite:
            // Everything the server creates (database, log, shared-memory index) is for this user only.
            umask(0o077)
            if case .tightened(let mode) = try DataFolder.prepare(data) {
                logger.notice("the data folder was readable by others; made it private (0700)",
                              metadata: ["folder": "\(data)", "previousMode": "\(String(mode, radix: 8))"])
            }
            let sqlite = try SQLiteStore(path: "\(data)/panes.sqlite", synchronous: sync == .normal ? .normal : .full,
                                         cacheKiB: configuration.settings.sqliteCacheKiB)
            // As SQLite holds it: what the setting did, for an operator (and a test) to see.
            let cacheKiB = try sqlite.cacheKiB()
            logger.info("SQLite store opened", metadata: ["sqliteCacheKiB": "\(cacheKiB)"])
            backing = sqlite
        }

        let transport = try transportConfiguration(configuration, logger: logger)
        let webhooks = try makeWebhooks(configuration, store: store, backing: backing, cluster: cluster, logger: logger)

        let keyring = try apiKeys.map(Self.readAPIKeys) ?? APIKeyring()
        var reload: (@Sendable () throws -> APIKeyring)?
        if let path = apiKeys { reload = { try Self.readAPIKeys(path) } }
        let runtime = ServerRuntime(configuration: configuration, transport: transport, store: backing,
                                        authenticator: authenticator, secretHasher: .sha256,
                                        serverVersion: Panes.version, cluster: cluster,
                                        apiKeys: keyring, reloadAPIKeys: reload, ids: .openSSL,
                                        logger: logger)
        connectWebhooks(webhooks, to: runtime)
        try runtime.start()
        webhooks?.start()
        // Scripts and tests wait for this exact line to learn the port.
        let banner = "Panes listening on http://\(host):\(runtime.transport.port) (store: \(store.display)\(store == .sqlite ? " in \(data), synchronous \(sync == .normal ? "normal" : "full")" : ""), auth: \(auth.rawValue))\n"
        FileHandle.standardOutput.write(Data(banner.utf8))
        let code = runtime.run()
        webhooks?.stop()
        logger.notice("stopped", metadata: ["exitCode": "\(code)"])
        if code != 0 { throw ExitCode(code) }
    }

    /// The authenticator `--auth` asks for, from its file.
    private func makeAuthenticator(settings: Settings, logger: Logger) throws -> Authenticator {
        if jwtKeys != nil && auth != .jwt {
            throw ValidationError("--jwt-keys is only used with --auth jwt (this server would ignore it: --auth \(auth.rawValue))")
        }
        switch auth {
        case .open:
            return .open()
        case .tokens:
            guard let tokens else { throw ValidationError("--auth tokens needs --tokens FILE") }
            return try Authenticator.tokens(json: readJSON(tokens, what: "tokens"))
        case .jwt:
            guard let jwtKeys else { throw ValidationError("--auth jwt needs --jwt-keys FILE (issuer, audience and keys)") }
            let directory = URL(fileURLWithPath: jwtKeys).deletingLastPathComponent().path
            let configuration: JWTConfiguration
            do {
                configuration = try JWTConfiguration(json: readJSON(jwtKeys, what: "JWT key"), directory: directory)
            } catch let error as PanesError {
                throw ValidationError("the JWT key file \(jwtKeys): \(error.message)")
            }
            if configuration.keys.values.contains(where: { $0.algorithm == .hs256 }), isReadableByOthers(jwtKeys) {
                logger.warning("the JWT key file holds HS256 secrets and is readable by other users; chmod 600 it",
                               metadata: ["file": "\(jwtKeys)"])
            }
            return .verified(JWTVerifier(configuration: configuration, clockSkewMs: settings.jwtClockSkewMs,
                                         cacheEntries: settings.jwtCacheEntries))
        }
    }

    /// The API keys file, checked whole: a bad entry stops the start (or, on SIGHUP, keeps the old keys).
    static func readAPIKeys(_ path: String) throws -> APIKeyring {
        do {
            return try APIKeyring(json: readJSON(path, what: "API keys"))
        } catch let error as PanesError {
            throw ValidationError("the API keys file \(path): \(error.message)")
        }
    }

    private func isReadableByOthers(_ path: String) -> Bool {
        guard let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int else {
            return false
        }
        return mode & 0o077 != 0
    }

}

/// Reads and parses a JSON file, naming the file in errors.
func readJSON(_ path: String, what: String) throws -> JSONValue {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw ValidationError("cannot read the \(what) file \(path)")
    }
    switch JSONCodec.decode([UInt8](data)) {
    case .success(let json): return json
    case .failure(let error): throw ValidationError("the \(what) file \(path) is not valid JSON: \(error)")
    }
}

