/// Durable state. The embedded default is SQLite; the in-memory store serves tests and
/// `--store memory`. Every implementation passes the same conformance tests.
///
/// A store is used from one thread only (the store thread), so implementations need no locks.
public protocol Store: AnyObject {
    /// Everything the hub keeps in memory, read once at start.
    func loadState() throws -> StoredState
    /// Applies the batch in one transaction: all of it is durable when this returns, or none.
    func apply(_ batch: [StoreCommand]) throws
}

/// What the hub loads at start.
public struct StoredState: Sendable, Equatable {
    public var sessions: [SceneSession]
    public var preferences: [PreferenceDomain: StoredPreferences]

    public init(sessions: [SceneSession] = [], preferences: [PreferenceDomain: StoredPreferences] = [:]) {
        self.sessions = sessions
        self.preferences = preferences
    }
}

/// One domain's values and the domain's version counter.
public struct StoredPreferences: Sendable, Equatable {
    public var version: Int64
    public var values: [String: VersionedValue]

    public init(version: Int64 = 0, values: [String: VersionedValue] = [:]) {
        self.version = version
        self.values = values
    }
}

public struct VersionedValue: Sendable, Equatable {
    public var value: JSONValue
    public var version: Int64

    public init(value: JSONValue, version: Int64) {
        self.value = value
        self.version = version
    }
}
