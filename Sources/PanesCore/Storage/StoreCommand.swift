/// One change to durable state. The hub emits them; a store applies a batch atomically.
public enum StoreCommand: Sendable, Equatable {
    case putSession(SceneSession)
    /// Deletes the session and everything stored for it.
    case deleteSession(SessionID)
    case putPreference(PreferenceDomain, keyPath: String, value: JSONValue, version: Int64)
    /// Removes a value; `version` is the domain's version after the removal, kept so versions
    /// never go backwards across a restart.
    case removePreference(PreferenceDomain, keyPath: String, version: Int64)
}

/// A preference domain: one user's preferences in a workspace, or the workspace's own.
public struct PreferenceDomain: Hashable, Sendable, CustomStringConvertible {
    public let workspace: String
    /// nil for the workspace domain.
    public let user: String?

    public init(workspace: String, user: String?) {
        self.workspace = workspace
        self.user = user
    }

    public var kind: String { user == nil ? "workspace" : "user" }
    public var description: String { user.map { "user:\($0)@\(workspace)" } ?? "workspace:\(workspace)" }
}

/// A read the hub needs from the store without blocking the service thread.
public enum LoadRequest: Sendable, Equatable {
    case placeholder
}

public enum LoadResult: Sendable {
    case placeholder
}
