import PanesCore
import PanesStorageTestSupport
import Testing

/// What every `Store` must do with documents and their operation logs, run against each
/// implementation. Reads go through `reloaded()` / `reloadedDocument`, so for SQLite they
/// check what is on disk.
@Suite struct DocumentStoreConformanceTests {
    static func reloadedDocument(_ store: StoreHarness, _ id: String = "doc_a1",
                                 retention: Int = 1_000) throws -> StoredDocument? {
        _ = try store.reloaded()
        return try store.store.loadDocument(DocumentID(id), retention: retention)
    }

    @Test(arguments: StoreKind.tested)
    func recordsRoundTripAndLoadSortedByIdentifier(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let records = ["doc_f0", "doc_0a", "doc_c7"].map { Fixtures.document(id: $0) }
        try store.apply(records.map { .createDocument($0, text: "") })
        #expect(try store.reloaded().documents == records.sorted { $0.id < $1.id })
    }

    @Test(arguments: StoreKind.tested)
    func aNewDocumentsTextIsItsSnapshotAtRevisionZero(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let text = "e\u{301} 👩🏽‍💻\n\"quoted\" \\ \u{0}end"
        try store.apply([.createDocument(Fixtures.document(length: text.unicodeScalars.count), text: text)])
        let loaded = try #require(try Self.reloadedDocument(store))
        #expect(loaded.record == Fixtures.document(length: text.unicodeScalars.count))
        #expect(loaded.snapshotRevision == 0)
        #expect(loaded.snapshotText.unicodeScalars.elementsEqual(text.unicodeScalars))
        #expect(loaded.operations.isEmpty)
    }

    @Test(arguments: StoreKind.tested)
    func manyOperationsAppendedInOneBatchComeBackExactlyWhateverTheyHold(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let id = DocumentID("doc_a1")
        // Characters that quoting gets wrong: quotes, backslashes, braces, commas, spaces,
        // NULL spelled out, an empty name, emoji.
        let awkward = ["\"", "\\", "{a,b}", " NULL ", "", "😀 \"q\" \\n", "x,y", "}{"]
        var operations: [StoredOperation] = []
        var length = 0
        for (index, text) in awkward.enumerated() {
            var operation = Fixtures.appended(text.isEmpty ? "e" : text, at: Int64(index + 1), after: length)
            operation.opId = text
            operation.author = DocumentAuthor(scene: "scn_\(index)", user: text, name: text)
            operations.append(operation)
            length += (text.isEmpty ? "e" : text).unicodeScalars.count
        }
        try store.apply([.createDocument(Fixtures.document(), text: "")]
                        + operations.prefix(5).map { .appendOperation(id, $0, length: 0) }
                        + [.renameDocument(id, title: "between two runs")]
                        + operations.dropFirst(5).map { .appendOperation(id, $0, length: length) })
        let loaded = try #require(try Self.reloadedDocument(store))
        #expect(loaded.operations == operations)
        #expect(loaded.record.revision == Int64(awkward.count))
        #expect(loaded.record.length == length)
        #expect(loaded.record.modifiedAt == operations.last?.createdAt)
    }

    @Test(arguments: StoreKind.tested)
    func appendedOperationsComeBackInOrderAndAdvanceTheRecord(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let first = Fixtures.appended("é😀", at: 1, after: 2)
        let second = Fixtures.appended("\u{1D11E}", at: 2, after: 4)
        try store.apply([.createDocument(Fixtures.document(length: 2), text: "ab"),
                         .appendOperation(DocumentID("doc_a1"), first, length: 4)])
        try store.apply([.appendOperation(DocumentID("doc_a1"), second, length: 5)])

        let loaded = try #require(try Self.reloadedDocument(store))
        #expect(loaded.operations == [first, second])
        #expect(loaded.snapshotText == "ab")
        var advanced = Fixtures.document(revision: 2, length: 5)
        advanced.modifiedAt = second.createdAt
        #expect(loaded.record == advanced)
        #expect(try store.reloaded().documents == [advanced])
    }

    /// What a document remembers of client operations past its log goes with its snapshot,
    /// and a new snapshot replaces it.
    @Test(arguments: StoreKind.tested)
    func aSnapshotKeepsWhatTheDocumentRemembersOfAppliedOpIds(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let id = DocumentID("doc_a1")
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        #expect(try Self.reloadedDocument(store)?.applied == AppliedStreams())
        let applied = AppliedStreams(["sess.page1:": .init(counter: 17, revision: 4, at: 1_700_000_000_123),
                                      "whole id, no counter": .init(counter: 0, revision: 2, at: 5)])
        try store.apply([.snapshotDocument(id, revision: 0, text: "", keepFrom: 0, applied: applied)])
        #expect(try Self.reloadedDocument(store)?.applied == applied)
        try store.apply([.snapshotDocument(id, revision: 0, text: "", keepFrom: 0)])
        #expect(try Self.reloadedDocument(store)?.applied == AppliedStreams())
    }

    @Test(arguments: StoreKind.tested)
    func aSnapshotReplacesTheTextAndPrunesTheLogBeforeKeepFrom(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let id = DocumentID("doc_a1")
        var batch: [StoreCommand] = [.createDocument(Fixtures.document(), text: "")]
        for revision in 1...6 {
            batch.append(.appendOperation(id, Fixtures.appended("x", at: Int64(revision), after: revision - 1),
                                          length: revision))
        }
        try store.apply(batch)
        try store.apply([.snapshotDocument(id, revision: 5, text: "xxxxx", keepFrom: 3)])

        let loaded = try #require(try Self.reloadedDocument(store))
        #expect(loaded.snapshotRevision == 5)
        #expect(loaded.snapshotText == "xxxxx")
        #expect(loaded.operations.map(\.revision) == [3, 4, 5, 6])
        #expect(loaded.record.revision == 6)
        // A smaller retention at load time hands back less: only what is after snapshot - retention.
        #expect(try Self.reloadedDocument(store, retention: 1)?.operations.map(\.revision) == [5, 6])
        #expect(try Self.reloadedDocument(store, retention: 0)?.operations.map(\.revision) == [6])
    }

    @Test(arguments: StoreKind.tested)
    func renamingChangesOnlyTheTitle(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        try store.apply([.createDocument(Fixtures.document(length: 1), text: "a"),
                         .renameDocument(DocumentID("doc_a1"), title: "Renamed 🪟"),
                         .renameDocument(DocumentID("doc_unknown"), title: "nobody")])
        var renamed = Fixtures.document(length: 1)
        renamed.title = "Renamed 🪟"
        #expect(try store.reloaded().documents == [renamed])
        #expect(try Self.reloadedDocument(store)?.snapshotText == "a")
    }

    @Test(arguments: StoreKind.tested)
    func deletingADocumentDeletesItsLogAndLeavesTheOthers(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let id = DocumentID("doc_a1")
        try store.apply([
            .createDocument(Fixtures.document(), text: ""), .createDocument(Fixtures.document(id: "doc_b2"), text: "keep"),
            .appendOperation(id, Fixtures.appended("x", at: 1, after: 0), length: 1),
        ])
        try store.apply([.deleteDocument(id), .deleteDocument(DocumentID("doc_unknown"))])
        #expect(try store.reloaded().documents.map(\.id) == [DocumentID("doc_b2")])
        #expect(try Self.reloadedDocument(store) == nil)
        #expect(try Self.reloadedDocument(store, "doc_b2")?.snapshotText == "keep")

        // Made again under the same id, it starts with an empty log: nothing was left behind.
        try store.apply([.createDocument(Fixtures.document(), text: "new"),
                         .appendOperation(id, Fixtures.appended("y", at: 1, after: 3), length: 4)])
        #expect(try Self.reloadedDocument(store)?.operations.map(\.opId) == ["sess-1:1"])
    }

    @Test(arguments: StoreKind.tested)
    func anUnknownDocumentLoadsAsNil(_ kind: StoreKind) throws {
        #expect(try Self.reloadedDocument(try StoreHarness(kind), "doc_nope") == nil)
    }

    @Test(arguments: StoreKind.tested)
    func creatingADocumentTwiceFailsTheWholeBatch(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        try store.apply([.createDocument(Fixtures.document(), text: "first")])
        let before = try store.reloaded()
        #expect(throws: (any Error).self) {
            try store.apply([.putSession(Fixtures.bareSession()), .createDocument(Fixtures.document(), text: "second")])
        }
        #expect(try store.reloaded() == before)
        #expect(try Self.reloadedDocument(store)?.snapshotText == "first")
    }

    @Test(arguments: StoreKind.tested)
    func appendingToAnUnknownDocumentOrATakenRevisionFailsTheWholeBatch(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let id = DocumentID("doc_a1")
        try store.apply([.createDocument(Fixtures.document(), text: ""),
                         .appendOperation(id, Fixtures.appended("x", at: 1, after: 0), length: 1)])
        let before = try store.reloaded()
        #expect(throws: (any Error).self) {
            try store.apply([.renameDocument(id, title: "lost"),
                             .appendOperation(DocumentID("doc_nope"), Fixtures.appended("x", at: 1, after: 0), length: 1)])
        }
        #expect(throws: (any Error).self) {
            try store.apply([.renameDocument(id, title: "lost"),
                             .appendOperation(id, Fixtures.appended("z", at: 1, after: 0), length: 1)])
        }
        #expect(try store.reloaded() == before)
        #expect(try Self.reloadedDocument(store)?.operations == [Fixtures.appended("x", at: 1, after: 0)])
    }

    @Test(arguments: StoreKind.tested)
    func aFailedBatchOfDocumentCommandsLeavesNothingBehind(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let id = DocumentID("doc_a1")
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        let before = try store.reloaded()
        let batch: [StoreCommand] = [
            .appendOperation(id, Fixtures.appended("x", at: 1, after: 0), length: 1),
            .snapshotDocument(id, revision: 1, text: "x", keepFrom: 2),
            .renameDocument(id, title: "changed"),
            .createDocument(Fixtures.document(id: "doc_b2"), text: ""),
            .deleteDocument(id),
            .putSession(Fixtures.bareSession()),
        ]
        store.failNextBatch(afterCommands: 5)
        #expect(throws: (any Error).self) { try store.apply(batch) }
        #expect(try store.reloaded() == before)
        #expect(try Self.reloadedDocument(store)?.operations == [])

        try store.apply(batch)
        #expect(try store.reloaded().documents.map(\.id) == [DocumentID("doc_b2")])
    }
}
