import PanesCore
import PanesStorageTestSupport
import Testing

/// What every `Store` must do with document versions, run against each implementation: texts
/// kept whatever they hold, newest first, checkpoints pruned, named versions kept, all gone
/// with their document, and nothing stored for a document that is not.
@Suite struct VersionStoreConformanceTests {
    static let id = DocumentID("doc_a1")

    static func version(_ name: String?, revision: Int64, kind: VersionRecord.Kind = .named, at: Millis = 1_000)
        -> VersionRecord {
        VersionRecord(id: "ver_\(kind.rawValue)_\(revision)_\(name ?? "")", document: id, kind: kind, revision: revision,
                      name: name, createdAt: at, createdBy: "ada", length: 0)
    }

    @Test(arguments: StoreKind.tested)
    func versionsComeBackNewestFirstWithTheirTextsAfterAReopen(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let text = "e\u{301} 👩🏽‍💻\n\"quoted\" \\ \u{0}end"
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        let first = Self.version("first", revision: 1)
        let second = Self.version(nil, revision: 2, kind: .checkpoint)
        try store.apply([.saveVersion(first, text: Rope(text), keepCheckpoints: 10)])
        try store.apply([.saveVersion(second, text: "two", keepCheckpoints: 10)])
        _ = try store.reloaded()
        #expect(try store.store.loadVersions(Self.id) == [second, first])
        let read = try #require(try store.store.loadVersion(Self.id, id: first.id))
        #expect(read.0 == first)
        #expect(read.1.unicodeScalars.elementsEqual(text.unicodeScalars))
        #expect(try store.store.loadVersion(Self.id, id: "ver_nope") == nil)
        #expect(try store.store.loadVersions(DocumentID("doc_other")).isEmpty)
    }

    @Test(arguments: StoreKind.tested)
    func onlyTheNewestCheckpointsAreKeptAndNamedVersionsStay(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        let named = Self.version("keep", revision: 0)
        try store.apply([.saveVersion(named, text: "n", keepCheckpoints: 2)])
        for revision in 1...4 {
            try store.apply([.saveVersion(Self.version(nil, revision: Int64(revision), kind: .checkpoint),
                                          text: Rope("r\(revision)"), keepCheckpoints: 2)])
        }
        _ = try store.reloaded()
        #expect(try store.store.loadVersions(Self.id).map(\.revision) == [4, 3, 0])
        #expect(try store.store.loadVersion(Self.id, id: named.id)?.1 == "n")
    }

    @Test(arguments: StoreKind.tested)
    func versionsGoWithTheirDocumentAndNoneAreStoredForAnUnknownOne(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        let kept = Self.version("v", revision: 0)
        try store.apply([.saveVersion(kept, text: "secret words", keepCheckpoints: 2)])
        try store.apply([.deleteDocument(Self.id)])
        #expect(try store.store.loadVersions(Self.id).isEmpty)
        // A version of a document deleted meanwhile (on another node) is not stored, and the
        // batch it came in still commits.
        try store.apply([.saveVersion(kept, text: "late", keepCheckpoints: 2), .createDocument(Fixtures.document(id: "doc_b2"), text: "")])
        _ = try store.reloaded()
        #expect(try store.store.loadVersions(Self.id).isEmpty)
        #expect(try store.reloaded().documents.map(\.id) == [DocumentID("doc_b2")])
        // The same document id made again starts with no versions.
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        #expect(try store.store.loadVersions(Self.id).isEmpty)
    }
}
