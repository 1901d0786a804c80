/// A store that keeps everything in memory: for tests and `--store memory`. Not durable.
public final class MemoryStore: Store {
    private var state = StoredState()
    private var sessionIndex: [SessionID: Int] = [:]
    /// Set to make the next `apply` fail, to test how the hub handles a failing store.
    public var failNextApply = false

    public init() {}

    /// Everything stored, sessions sorted by id as the SQLite store returns them (byte order,
    /// which is SQLite's), so both stores hand the hub the same state.
    public func loadState() throws -> StoredState {
        var loaded = state
        loaded.sessions.sort { $0.id.rawValue.utf8.lexicographicallyPrecedes($1.id.rawValue.utf8) }
        return loaded
    }

    public func apply(_ batch: [StoreCommand]) throws {
        if failNextApply {
            failNextApply = false
            throw MemoryStoreError.injectedFailure
        }
        for command in batch {
            switch command {
            case .putSession(let session):
                if let index = sessionIndex[session.id] {
                    state.sessions[index] = session
                } else {
                    sessionIndex[session.id] = state.sessions.count
                    state.sessions.append(session)
                }
            case .deleteSession(let id):
                guard let index = sessionIndex.removeValue(forKey: id) else { continue }
                state.sessions.remove(at: index)
                for i in index..<state.sessions.count { sessionIndex[state.sessions[i].id] = i }
            case .putPreference(let domain, let keyPath, let value, let version):
                state.preferences[domain, default: StoredPreferences()].values[keyPath] =
                    VersionedValue(value: value, version: version)
                state.preferences[domain]!.version = max(state.preferences[domain]!.version, version)
            case .removePreference(let domain, let keyPath, let version):
                state.preferences[domain, default: StoredPreferences()].values[keyPath] = nil
                state.preferences[domain]!.version = max(state.preferences[domain]!.version, version)
            }
        }
    }
}

public enum MemoryStoreError: Error {
    case injectedFailure
}
