/// A store that keeps everything in memory: for tests and `--store memory`. Not durable.
///
/// It follows the same contract as the SQLite store, down to which commands fail a batch, so
/// the conformance tests hold it to the same behaviour.
public final class MemoryStore: Store {
    private var state = StoredState()
    private var sessionIndex: [SessionID: Int] = [:]
    private var documents: [DocumentID: StoredDocument] = [:]
    /// Set to make the next `apply` fail, to test how the hub handles a failing store.
    public var failNextApply = false
    /// Set to make the next `loadDocument` fail, to test how the hub answers a failed load.
    public var failNextLoad = false

    public init() {}

    /// Everything stored, sessions sorted by id as the SQLite store returns them (byte order,
    /// which is SQLite's), so both stores hand the hub the same state.
    public func loadState() throws -> StoredState {
        var loaded = state
        loaded.sessions.sort { $0.id.rawValue.utf8.lexicographicallyPrecedes($1.id.rawValue.utf8) }
        loaded.documents = documents.values.map(\.record)
            .sorted { $0.id.rawValue.utf8.lexicographicallyPrecedes($1.id.rawValue.utf8) }
        return loaded
    }

    public func loadDocument(_ id: DocumentID, retention: Int) throws -> StoredDocument? {
        if failNextLoad {
            failNextLoad = false
            throw MemoryStoreError.injectedFailure
        }
        guard var document = documents[id] else { return nil }
        let after = document.snapshotRevision - Int64(retention)
        document.operations.removeAll { $0.revision <= after }
        return document
    }

    public func apply(_ batch: [StoreCommand]) throws {
        if failNextApply {
            failNextApply = false
            throw MemoryStoreError.injectedFailure
        }
        // All or nothing, as a transaction: work on copies and keep them only if every command fits.
        let saved = (state, sessionIndex, documents)
        do {
            for command in batch { try apply(command) }
        } catch {
            (state, sessionIndex, documents) = saved
            throw error
        }
    }

    private func apply(_ command: StoreCommand) throws {
        switch command {
        case .putSession(let session):
            if let index = sessionIndex[session.id] {
                state.sessions[index] = session
            } else {
                sessionIndex[session.id] = state.sessions.count
                state.sessions.append(session)
            }
        case .deleteSession(let id):
            guard let index = sessionIndex.removeValue(forKey: id) else { return }
            state.sessions.remove(at: index)
            for i in index..<state.sessions.count { sessionIndex[state.sessions[i].id] = i }
        case .putPreference(let domain, let keyPath, let value, let version):
            state.preferences[domain, default: StoredPreferences()].values[keyPath] =
                VersionedValue(value: value, version: version)
            state.preferences[domain]!.version = max(state.preferences[domain]!.version, version)
        case .removePreference(let domain, let keyPath, let version):
            state.preferences[domain, default: StoredPreferences()].values[keyPath] = nil
            state.preferences[domain]!.version = max(state.preferences[domain]!.version, version)
        case .createDocument(let record, let text):
            guard documents[record.id] == nil else { throw MemoryStoreError.documentExists(record.id) }
            documents[record.id] = StoredDocument(record: record, snapshotRevision: record.revision,
                                                  snapshotText: text, operations: [])
        case .renameDocument(let id, let title):
            documents[id]?.record.title = title
        case .appendOperation(let id, let operation, let length):
            guard var document = documents[id] else { throw MemoryStoreError.noSuchDocument(id) }
            guard !document.operations.contains(where: { $0.revision == operation.revision }) else {
                throw MemoryStoreError.revisionExists(id, operation.revision)
            }
            document.operations.append(operation)
            document.operations.sort { $0.revision < $1.revision }
            document.record.revision = operation.revision
            document.record.length = length
            document.record.modifiedAt = operation.createdAt
            documents[id] = document
        case .snapshotDocument(let id, let revision, let text, let keepFrom):
            guard var document = documents[id] else { return }
            document.snapshotRevision = revision
            document.snapshotText = String(text)
            document.operations.removeAll { $0.revision < keepFrom }
            documents[id] = document
        case .deleteDocument(let id):
            documents[id] = nil
        }
    }
}

public enum MemoryStoreError: Error {
    case injectedFailure
    /// `createDocument` for an id that is taken (SQLite: a primary key conflict).
    case documentExists(DocumentID)
    /// `appendOperation` for a document that is not stored (SQLite: a foreign key failure).
    case noSuchDocument(DocumentID)
    /// `appendOperation` at a revision already logged (SQLite: a primary key conflict).
    case revisionExists(DocumentID, Int64)
}
