import PanesCore

/// A test store built around a memory store (a slow, failing or gated one): what it does not
/// change about reading goes to `inner`.
protocol WrappedMemoryStore: Store {
    var inner: MemoryStore { get }
}

extension WrappedMemoryStore {
    func loadState() throws -> StoredState { try inner.loadState() }
    func loadDocument(_ id: DocumentID, retention: Int) throws -> StoredDocument? {
        try inner.loadDocument(id, retention: retention)
    }
    func loadRequestRecords(_ slots: [RequestKeySlot]) throws -> [RequestRecord] { try inner.loadRequestRecords(slots) }
    func loadPreferences(_ domain: PreferenceDomain) throws -> StoredPreferences? { try inner.loadPreferences(domain) }
}
