import Foundation

/// What `--store` and `PANES_STORE` accept for PostgreSQL, and how it is shown.
public enum PostgresURL {
    /// Whether `text` names a PostgreSQL database (`postgres://…` or `postgresql://…`).
    public static func matches(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The URL without its password, for banners and logs: `postgres://ada:***@db/panes`.
    /// A `password=` query parameter is masked too.
    public static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        var rest = String(url[scheme.upperBound...])
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@"),
           let colon = rest[..<at].firstIndex(of: ":") {
            rest.replaceSubrange(rest.index(after: colon)..<at, with: "***")
        }
        if let query = rest.firstIndex(of: "?") {
            let parameters = rest[rest.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
                .map { $0.hasPrefix("password=") ? "password=***" : String($0) }
            rest = String(rest[...query]) + parameters.joined(separator: "&")
        }
        return String(url[..<scheme.upperBound]) + rest
    }
}
