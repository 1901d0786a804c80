/// A conflicting commit resolved while the store holds its channel's lock (cluster stores,
/// `SharedStore.apply(_:resolvingConflicts:)`).
public struct ConflictRetry {
    /// The commit to write in the conflicting one's place, in the same transaction; nil when
    /// the hub has nothing to retry on that channel now.
    public var retry: Commit?
    /// Everything else the outcome caused, for the runtime to perform as usual.
    public var effects: [Effect]
}

extension Hub {
    /// A commit conflicted and the store read what was committed after its base: the hub
    /// applies that as any `behind` outcome, and the first commit it makes on the same channel
    /// meanwhile (the retry) comes back as `retry`, not among the effects.
    public mutating func resolveConflict(_ commit: Commit, behind operations: [StoredOperation]) -> ConflictRetry {
        commits.resolving = (commit.channel, nil)
        let effects = handle(.committed(commit.id, .behind(operations)))
        let retry = commits.resolving?.retry
        commits.resolving = nil
        return ConflictRetry(retry: retry, effects: effects)
    }

    /// Hands a commit to the store (`Effect.commit`), or keeps it as the retry of the conflict
    /// being resolved on its channel (`resolveConflict`).
    mutating func submit(_ commit: Commit) {
        if let resolving = commits.resolving, resolving.channel == commit.channel, resolving.retry == nil {
            commits.resolving?.retry = commit
            return
        }
        effects.append(.commit(commit))
    }
}
