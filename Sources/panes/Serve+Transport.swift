public import ArgumentParser
import Foundation
public import Logging
import PanesCore
public import PanesTransport

/// The transport half of `panes serve`: checking the options that shape listening (a bad value
/// stops the start with a message; nothing falls back silently) and building the transport's
/// configuration from them and the configuration file.
extension Serve {
    /// Refuses option values and combinations that would otherwise be ignored or be unsafe.
    func checkTransportOptions() throws {
        guard !host.isEmpty else { throw ValidationError("--host must name an address to listen on, e.g. 127.0.0.1") }
        guard ListenAddress.isIPv4(host) else {
            throw ValidationError("""
                --host \(host) is not an IPv4 address: Panes listens on IPv4 only (e.g. 127.0.0.1, or \
                0.0.0.0 for every interface)
                """)
        }
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port must be from 0 to 65535 (0 picks a free port), not \(port)")
        }
        if auth == .open && !ListenAddress.isLoopback(host) {
            throw ValidationError("""
                --auth open lets anyone who can reach the server act as any user, so it listens on \
                loopback only, and --host \(host) is not a loopback address (127.0.0.0/8). Use an \
                authenticating mode (--auth tokens --tokens FILE, or --auth jwt), or --host 127.0.0.1.
                """)
        }
        if tokens != nil && auth != .tokens {
            throw ValidationError("--tokens is read only with --auth tokens (here --auth is \(auth.rawValue))")
        }
        if let sync, let store = try? StoreLocation.resolve(store, environment: ProcessInfo.processInfo.environment),
           store != .sqlite {
            throw ValidationError("--sync \(sync.rawValue) applies to the SQLite store only (here --store \(store.display))")
        }
        if let web, !FileManager.default.fileExists(atPath: "\(web)/index.html") {
            throw ValidationError("--web \(web) is not a folder with an index.html")
        }
        _ = try origins(configured: [])
        _ = try trustedProxies()
    }

    /// `--trusted-proxy`, each an IP address.
    func trustedProxies() throws -> Set<String> {
        var proxies: Set<String> = []
        for text in trustedProxy {
            guard let address = PeerAddress.normalized(text) else {
                throw ValidationError("--trusted-proxy \(text) is not an IP address (e.g. 10.0.0.2 or 2001:db8::2)")
            }
            proxies.insert(address)
        }
        return proxies
    }

    /// The listening, limits and origins, from the options and the configuration file.
    func transportConfiguration(_ configuration: ServerConfiguration, logger: Logger) throws -> TransportConfiguration {
        let settings = configuration.settings
        let webRoot = web ?? defaultWebRoot()
        return TransportConfiguration(
            host: host, port: port,
            webRoot: webRoot.map { URL(fileURLWithPath: $0).standardizedFileURL.path },
            maxMessageBytes: settings.maxMessageBytes, maxOutboundQueue: settings.maxOutboundQueue,
            maxCoalescedWriteBytes: settings.maxCoalescedWriteBytes, maxClosingHandshakes: settings.maxClosingHandshakes,
            slowConsumerCloseCode: CloseCode.slowConsumer.rawValue, unresponsiveCloseCode: CloseCode.unresponsive.rawValue,
            origins: try origins(configured: configuration.allowedOrigins), deflate: deflate,
            idlePingMilliseconds: settings.idlePingMs, eventLoop: eventLoop, trustedProxies: try trustedProxies(),
            apiPath: "/api", maxHTTPBodyBytes: settings.maxHTTPBodyBytes,
            httpResponseTimeoutMilliseconds: settings.httpResponseTimeoutMs,
            maxHTTPRequestsInFlight: settings.maxHTTPRequestsInFlight, maxHTTPHeaderBytes: settings.maxHTTPHeaderBytes,
            httpHeaderTimeoutMilliseconds: settings.httpHeaderTimeoutMs,
            maxConnectionsInHeaders: settings.maxConnectionsInHeaders == 0 ? Self.openFilesLimit() : settings.maxConnectionsInHeaders,
            maxConnectionsInHeadersPerAddress: settings.maxConnectionsInHeadersPerAddress, logger: logger)
    }

    /// The process' open-files soft limit, which `maxConnectionsInHeaders` 0 stands for: the
    /// total cap then closes at accept only what would have run out of descriptors anyway
    /// (1,000,000, the setting's largest, for no limit or one that cannot be read).
    static func openFilesLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_000_000 }  // no limit is rlim_t.max
        return Int(min(limit.rlim_cur, 1_000_000))
    }

    /// `web/` next to the working directory, or next to the executable's package, if present.
    private func defaultWebRoot() -> String? {
        let candidates = ["web", URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("../../../web").standardizedFileURL.path]
        return candidates.first { FileManager.default.fileExists(atPath: "\($0)/index.html") }
    }

    /// `--allowed-origin`, the configuration file's `allowedOrigins` and `--public-url`, each
    /// parsed strictly: an origin that would never match is a mistake to report, not to skip.
    private func origins(configured: [String]) throws -> OriginConfiguration {
        var allowed: [WebOrigin] = []
        for text in allowedOrigins {
            guard let origin = WebOrigin(text) else {
                throw ValidationError("--allowed-origin \(text) is not an origin: write scheme://host[:port] (http or https, no path)")
            }
            allowed.append(origin)
        }
        for (index, text) in configured.enumerated() {
            guard let origin = WebOrigin(text) else {
                throw ValidationError("allowedOrigins[\(index)] in \(config ?? "the configuration") is \"\(text)\", not an origin: write scheme://host[:port] (http or https, no path)")
            }
            allowed.append(origin)
        }
        var configuration = OriginConfiguration(allowed: allowed)
        if let publicURL {
            guard let origin = WebOrigin(url: publicURL) else {
                throw ValidationError("--public-url \(publicURL) is not an http or https URL with a host")
            }
            configuration.publicURL = origin
        }
        return configuration
    }
}

extension EventLoop: ExpressibleByArgument {}
// `--log-level` parses swift-log's levels directly; neither package declares the conformance.
// swift-format-ignore: AvoidRetroactiveConformances
extension Logger.Level: @retroactive ExpressibleByArgument {}
