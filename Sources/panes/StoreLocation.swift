import ArgumentParser
import PanesPostgres

/// Where `panes serve` keeps state: `--store sqlite` (the default, in `--data`), `memory`, or a
/// PostgreSQL URL (`postgres://…` / `postgresql://…`) for a node of a cluster. Without
/// `--store`, the environment's `PANES_STORE` decides, so a URL with a password need not
/// appear on a command line.
enum StoreLocation: Equatable, ExpressibleByArgument {
    case sqlite
    case memory
    case postgres(url: String)

    static let environmentVariable = "PANES_STORE"

    init?(argument: String) {
        switch argument {
        case "sqlite": self = .sqlite
        case "memory": self = .memory
        case let url where PostgresURL.matches(url): self = .postgres(url: url)
        default: return nil
        }
    }

    /// `--store` if given, else `PANES_STORE`, else SQLite.
    static func resolve(_ option: StoreLocation?, environment: [String: String]) throws -> StoreLocation {
        if let option { return option }
        guard let text = environment[environmentVariable], !text.isEmpty else { return .sqlite }
        guard let location = StoreLocation(argument: text) else {
            throw ValidationError("\(environmentVariable)=\(PostgresURL.redacted(text)) is not a store: use sqlite, "
                                      + "memory, or a postgres://… URL")
        }
        return location
    }

    static var allValueStrings: [String] { ["sqlite", "memory", "postgres://…"] }

    /// How the banner names it: never with a password.
    var display: String {
        switch self {
        case .sqlite: "sqlite"
        case .memory: "memory"
        case .postgres(let url): PostgresURL.redacted(url)
        }
    }
}
