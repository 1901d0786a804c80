/// A web origin, `scheme://host[:port]`, in the form browsers send it: scheme `http` or
/// `https`, host lower-cased, port always known (defaults filled in), so two spellings of the
/// same origin compare equal.
public struct WebOrigin: Hashable, Sendable, CustomStringConvertible {
    public let scheme: String
    public let host: String
    public let port: Int

    /// Parses an `Origin` header or an `--allowed-origin` value: exactly
    /// `scheme://host[:port]`, with nothing after it, not even a `/`.
    public init?(_ text: String) {
        self.init(text, allowingPath: false)
    }

    /// Parses a URL such as `--public-url https://panes.example.com/app/` and keeps its origin.
    public init?(url text: String) {
        self.init(text, allowingPath: true)
    }

    public init?(scheme: String, host: String, port: Int) {
        let scheme = scheme.lowercased()
        guard Self.defaultPort(scheme) != nil, (1...65_535).contains(port), Self.isValidHost(host) else { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
    }

    private init?(_ text: String, allowingPath: Bool) {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let scheme = String(text[..<colon])
        var rest = text[text.index(colon, offsetBy: 3)...]
        if let slash = rest.firstIndex(of: "/") {
            guard allowingPath else { return nil }
            rest = rest[..<slash]
        }
        guard !rest.contains(where: { "?#@\\ ".contains($0) }) else { return nil }
        var host = rest
        var port: Int?
        // The port follows the last colon, unless that colon is inside an IPv6 literal.
        if let colon = rest.lastIndex(of: ":"), !rest[colon...].contains("]") {
            host = rest[..<colon]
            let digits = rest[rest.index(after: colon)...]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(digits) else {
                return nil
            }
            port = number
        }
        guard let defaultPort = Self.defaultPort(scheme.lowercased()) else { return nil }
        self.init(scheme: scheme, host: String(host), port: port ?? defaultPort)
    }

    /// The origin as a browser serialises it: no port when it is the scheme's default.
    public var description: String {
        port == Self.defaultPort(scheme) ? "\(scheme)://\(host)" : "\(scheme)://\(host):\(port)"
    }

    static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// A DNS name or IPv4 address (letters, digits, `-`, `.`), or a bracketed IPv6 literal;
    /// ASCII only (`Character.isHexDigit` alone takes fullwidth `Ａ` and `０`).
    static func isValidHost(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        if host.hasPrefix("[") {
            return host.hasSuffix("]") && host.count > 2
                && host.dropFirst().dropLast().allSatisfy { ($0.isASCII && $0.isHexDigit) || $0 == ":" || $0 == "." }
        }
        return host.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." }
            && !host.hasPrefix(".") && !host.hasPrefix("-")
    }
}
