import Testing
import PanesCore
@testable import PanesStorage

/// The stores every conformance test runs against.
enum StoreKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case memory
    case sqlite

    var description: String { rawValue }
}

/// A store under test, and the one operation that differs between kinds: reopening it, so
/// that what a test reads back is what survived, not what a cache remembered.
final class StoreHarness {
    let kind: StoreKind
    private(set) var store: any Store
    private let directory: TemporaryDirectory?

    init(_ kind: StoreKind) throws {
        self.kind = kind
        switch kind {
        case .memory:
            directory = nil
            store = MemoryStore()
        case .sqlite:
            let directory = try TemporaryDirectory()
            self.directory = directory
            store = try SQLiteStore(path: directory.file("panes.sqlite"))
        }
    }

    func apply(_ batch: [StoreCommand]) throws {
        try store.apply(batch)
    }

    /// The state as a freshly started server would load it. A memory store cannot be
    /// reopened; it is read as is.
    func reloaded() throws -> StoredState {
        if let sqlite = store as? SQLiteStore, let directory {
            sqlite.close()
            store = try SQLiteStore(path: directory.file("panes.sqlite"))
        }
        return try store.loadState()
    }

    /// Makes the next batch fail after `commands` of its commands have been applied, where the
    /// store allows that; the memory store can only fail before the first.
    func failNextBatch(afterCommands commands: Int) {
        switch store {
        case let memory as MemoryStore: memory.failNextApply = true
        case let sqlite as SQLiteStore: sqlite.failAfterCommands = commands
        default: Issue.record("no fault injection for \(kind)")
        }
    }
}
