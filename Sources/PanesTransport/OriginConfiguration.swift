#if canImport(Glibc)
import Glibc
#endif

/// Which browser origins may use the server, as configured; `OriginPolicy` is what the server
/// checks once it knows its real port.
public struct OriginConfiguration: Sendable, Equatable {
    /// Other origins allowed besides the server's own (`--allowed-origin`, `allowedOrigins`).
    public var allowed: [WebOrigin]
    /// Where browsers reach the server (`--public-url`), when that is not its bind address.
    public var publicURL: WebOrigin?

    public init(allowed: [WebOrigin] = [], publicURL: WebOrigin? = nil) {
        self.allowed = allowed
        self.publicURL = publicURL
    }

    /// The server's own origins: the public URL, plus `http://HOST:PORT` for the bind address
    /// (and `localhost` for a bind to 127.0.0.1, the address `localhost` has over IPv4, the only
    /// one the server listens on). Only this server can serve a page from its own bind address,
    /// so those are always safe to trust; a bind to another loopback address (127.0.0.2) does not
    /// make `localhost` or `127.0.0.1` its own, since whatever listens there serves them. Nothing
    /// here is ever taken from a request's `Host` header, which a DNS-rebinding page controls.
    public func policy(bindHost: String, port: Int) -> OriginPolicy {
        var own: [WebOrigin] = []
        if let publicURL { own.append(publicURL) }
        var hosts = [bindHost]
        if bindHost == "127.0.0.1" { hosts.append("localhost") }
        for host in hosts {
            if let origin = WebOrigin(scheme: "http", host: host, port: port) { own.append(origin) }
        }
        return OriginPolicy(allowed: own + allowed)
    }
}

/// The check every HTTP request and WebSocket upgrade goes through.
///
/// - `Origin`: absent is allowed (scripts, server-side clients and tests send none; browsers
///   always send one on WebSocket upgrades); present, it must equal an allowed origin exactly
///   (scheme, host case-insensitively, port with defaults normalised). `null`, empty and
///   malformed origins are refused.
/// - `Host`: required, and must name an allowed origin's host and port. A page on
///   `evil.example` that rebinds its name to this server sends `Host: evil.example`, so it
///   can neither open a WebSocket nor read `/metrics`.
public struct OriginPolicy: Sendable {
    public let allowed: [WebOrigin]
    /// `WebOrigin` compares its strings by canonical equivalence, but a parsed origin holds
    /// only ASCII (`isValidHost`), lower-cased, where that is the same as comparing bytes.
    private let origins: Set<WebOrigin>
    /// `host:port` for every allowed origin, and the bare host when its port is the default, as
    /// bytes: a `Host` header is compared by its bytes, after lower-casing ASCII letters only
    /// (CONCEPTS.md, invariant 10). `String.lowercased()` and `Set<String>` would let
    /// `Host: \u{212A}iosk.example` (KELVIN SIGN) through as `kiosk.example`.
    private let authorities: Set<[UInt8]>
    /// The same, and each allowed origin as a browser serialises it, as bytes: what a browser
    /// sends matches one of them byte for byte, which is checked without parsing, lower-casing
    /// or hashing anything (every upgrade of a reconnect storm comes through here; parsing the
    /// origin cost more than a tenth of a resume). Anything else takes the full check.
    private let authoritySpellings: [[UInt8]]
    private let originSpellings: [[UInt8]]

    public init(allowed: [WebOrigin]) {
        var unique: [WebOrigin] = []
        for origin in allowed where !unique.contains(origin) { unique.append(origin) }
        self.allowed = unique
        origins = Set(unique)
        var authorities = Set<[UInt8]>()
        for origin in unique {
            authorities.insert(Array("\(origin.host):\(origin.port)".utf8))
            if origin.port == WebOrigin.defaultPort(origin.scheme) { authorities.insert(Array(origin.host.utf8)) }
        }
        self.authorities = authorities
        authoritySpellings = Array(authorities)
        originSpellings = unique.map { Array($0.description.utf8) }
    }

    /// Nil when the request may proceed, else why not.
    public func refusal(origin: String?, host: String?) -> String? {
        guard let host else { return "no Host header" }
        guard Self.isSpelled(host, as: authoritySpellings) || authorities.contains(Self.normalisedAuthority(host)) else {
            return "Host \(host) is not one of this server's names"
        }
        guard let origin else { return nil }
        // An allowed origin's own spelling parses to that origin: allowed.
        if Self.isSpelled(origin, as: originSpellings) { return nil }
        guard let parsed = WebOrigin(origin) else { return "Origin \"\(origin)\" is not a valid origin" }
        guard origins.contains(parsed) else { return "Origin \(origin) is not allowed" }
        return nil
    }

    /// Whether a request's `Host` and `Origin` (nil when it sent none), as their bytes, are
    /// spelled exactly as an allowed authority and origin are: allowed, with nothing parsed or
    /// copied. False means "not known here": `refusal` decides.
    func allowsAsSpelled(origin: UnsafeRawBufferPointer?, host: UnsafeRawBufferPointer) -> Bool {
        guard Self.isSpelled(host, as: authoritySpellings) else { return false }
        guard let origin else { return true }
        return Self.isSpelled(origin, as: originSpellings)
    }

    private static func isSpelled(_ bytes: UnsafeRawBufferPointer, as spellings: [[UInt8]]) -> Bool {
        // memcmp, not `elementsEqual`: that walks both a byte at a time through iterators
        // (~10 instructions a byte, a `Host` and an `Origin` every upgrade).
        spellings.contains { spelling in
            spelling.count == bytes.count && spelling.withUnsafeBytes { spelled in
                spelled.isEmpty || memcmp(spelled.baseAddress!, bytes.baseAddress!, spelled.count) == 0
            }
        }
    }

    private static func isSpelled(_ text: String, as spellings: [[UInt8]]) -> Bool {
        spellings.contains { text.utf8.elementsEqual($0) }
    }

    /// Host names compare case-insensitively, in ASCII only: every other byte stays as it is,
    /// so a name spelled with a character that merely lower-cases or normalises to an allowed
    /// one's is refused. `host:80` needs no special case because an origin with a default port
    /// is listed both with and without it.
    static func normalisedAuthority(_ host: String) -> [UInt8] {
        host.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    }
}
