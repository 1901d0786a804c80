/// What a window attaching to its session or leaving it changes of the session's record: its
/// last activity, since when a window is live on it, and the failed restores in a row. A
/// `StoreCommand.putSessionLiveness` carries these alone, not a copy of the whole session: a
/// resume made one for its quiet write and the store thread dropped it again (issue 27).
public struct SessionLiveness: Sendable, Equatable {
    public let id: SessionID
    public var lastActiveAt: Millis
    /// Nil: no window is live on the session.
    public var liveSince: Millis?
    public var failedRestores: Int

    public init(id: SessionID, lastActiveAt: Millis, liveSince: Millis?, failedRestores: Int) {
        self.id = id
        self.lastActiveAt = lastActiveAt
        self.liveSince = liveSince
        self.failedRestores = failedRestores
    }

    /// The session's own.
    public init(of session: SceneSession) {
        self.init(id: session.id, lastActiveAt: session.lastActiveAt, liveSince: session.liveSince,
                  failedRestores: session.failedRestores)
    }
}

extension SceneSession {
    /// Takes these times and count over (from a liveness write of this session).
    public mutating func take(_ liveness: SessionLiveness) {
        lastActiveAt = liveness.lastActiveAt
        liveSince = liveness.liveSince
        failedRestores = liveness.failedRestores
    }
}
