import Foundation
public import PanesPostgres

/// A fresh PostgreSQL database for one test, on the server named by `PANES_TEST_POSTGRES`
/// (scripts/test starts a private one and sets it), dropped when the last reference goes.
/// Each test has its own, so tests run in parallel.
///
/// Without `PANES_TEST_POSTGRES` a test that needs PostgreSQL fails, saying how to run it: a
/// missing database must never pass silently. `PANES_TEST_POSTGRES=skip` leaves PostgreSQL
/// out on purpose (`TestDatabase.isSkipped`), and the parameterized tests drop that case.
public final class TestDatabase: @unchecked Sendable {
    /// The URL of the new database, for `PostgresStore(url:)` or `panes serve --store`.
    public let url: String
    public let name: String
    private let server: String

    public static let variable = "PANES_TEST_POSTGRES"

    /// Whether PostgreSQL tests are left out explicitly (`PANES_TEST_POSTGRES=skip`).
    public static var isSkipped: Bool {
        ProcessInfo.processInfo.environment[variable] == "skip"
    }

    /// The server's URL (any database on it; the tests connect to `postgres` to create theirs).
    public static func serverURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty, url != "skip" else {
            throw TestDatabaseError.notConfigured(
                "\(variable) is not set: these tests need a PostgreSQL server where they may create databases. "
                    + "Run them with scripts/test (which starts a private PostgreSQL 15 and sets it), or set "
                    + "\(variable)=postgres://user@host:port/postgres yourself (`source scripts/lib/deps.sh; source "
                    + "scripts/lib/postgres.sh; postgres_start \"$(mktemp -d)\"` starts one and prints its URL), or set \(variable)=skip to leave them out on purpose.")
        }
        return url
    }

    public init() throws {
        server = try Self.serverURL()
        name = "panes_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        let admin = try PostgresConnection(url: server)
        try admin.execute("CREATE DATABASE \(name)")
        url = Self.replacingDatabase(in: server, with: name)
    }

    deinit {
        guard let admin = try? PostgresConnection(url: server) else { return }
        _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// A new connection to this database.
    public func connect() throws -> PostgresConnection {
        try PostgresConnection(url: url)
    }

    /// `postgres://host:port/old?x` → `postgres://host:port/new?x`.
    static func replacingDatabase(in url: String, with database: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let query = rest.firstIndex(of: "?").map { String(rest[$0...]) } ?? ""
        let withoutQuery = rest.prefix { $0 != "?" }
        let authority = withoutQuery.prefix { $0 != "/" }
        return String(url[..<scheme.upperBound]) + authority + "/" + database + query
    }
}

public enum TestDatabaseError: Error, CustomStringConvertible {
    case notConfigured(String)

    public var description: String {
        switch self {
        case .notConfigured(let message): message
        }
    }
}
