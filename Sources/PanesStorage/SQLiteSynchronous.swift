/// How hard SQLite pushes a commit to disk before `apply` returns (`PRAGMA synchronous`).
public enum SQLiteSynchronous: String, Sendable, CaseIterable {
    /// Every commit is fsynced: it survives a killed process and a power loss. The default.
    case full = "FULL"
    /// In WAL mode commits survive a killed process but the last ones may be lost on power
    /// loss; for disposable data and benchmarks.
    case normal = "NORMAL"
}
