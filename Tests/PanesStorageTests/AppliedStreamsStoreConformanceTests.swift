@testable import PanesCore
import PanesStorageTestSupport
import Testing

/// What every `Store` keeps of a document's applied op ids (`AppliedStreams`) with its
/// snapshot: all of it, whatever bytes the streams differ in, or the document is refused.
@Suite struct AppliedStreamsStoreConformanceTests {
    static func folded(_ opIds: [String]) -> AppliedStreams {
        var applied = AppliedStreams()
        for (index, opId) in opIds.enumerated() {
            applied.fold(StoredOperation(revision: Int64(index + 3), operation: TextOperation(), opId: opId,
                                         author: DocumentAuthor(scene: "s", user: "u", name: "U"), createdAt: 1))
        }
        return applied
    }

    /// Two streams equal only canonically are two entries; a stored form that held them as two
    /// keys of one object could not be read back, and the document opened remembering none.
    @Test(arguments: StoreKind.tested)
    func streamsDifferingOnlyInNormalisationSurviveAReload(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let id = DocumentID("doc_a1")
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        let applied = Self.folded(["caf\u{E9}:7", "cafe\u{301}:2", "other.page1:9"])
        #expect(applied.entries.count == 3)
        try store.apply([.snapshotDocument(id, revision: 0, text: "", keepFrom: 0, applied: applied)])
        let loaded = try #require(try DocumentStoreConformanceTests.reloadedDocument(store))
        #expect(loaded.applied == applied)
        #expect(loaded.applied.applied("other.page1:9"))
        #expect(loaded.applied.applied("caf\u{E9}:7"))
        #expect(!loaded.applied.applied("cafe\u{301}:3"))
    }

    /// Databases hold the object form written before; it still reads, equivalent keys and all
    /// (the build before this one wrote such objects).
    @Test(arguments: StoreKind.tested)
    func theObjectFormWrittenBeforeStillLoads(_ kind: StoreKind) throws {
        guard kind != .memory else { return }  // it keeps no text form
        let store = try StoreHarness(kind)
        let id = DocumentID("doc_a1")
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        try store.writeStoredApplied(#"{"sess.page1":[4,10,77],"caf\#u{E9}":[7,3,1],"cafe\#u{301}":[2,4,1]}"#, of: id.rawValue)
        let loaded = try #require(try DocumentStoreConformanceTests.reloadedDocument(store))
        #expect(loaded.applied == AppliedStreams([
            "sess.page1": .init(counter: 4, revision: 10, at: 77),
            "caf\u{E9}": .init(counter: 7, revision: 3, at: 1),
            "cafe\u{301}": .init(counter: 2, revision: 4, at: 1),
        ]))
        try store.writeStoredApplied("{}", of: id.rawValue)  // the column's default
        #expect(try DocumentStoreConformanceTests.reloadedDocument(store)?.applied == AppliedStreams())
    }

    /// Applied op ids that cannot be read refuse the document, naming it, rather than open it
    /// remembering none (a resent edit would be applied twice); the rest of the state loads.
    @Test(arguments: StoreKind.tested, ["not json", #"[["s",1,2]]"#, #"{"s":"nonsense"}"#, "7"])
    func unreadableAppliedOpIdsRefuseTheDocumentNamingIt(_ kind: StoreKind, text: String) throws {
        guard kind != .memory else { return }  // it keeps no text form
        let store = try StoreHarness(kind)
        let id = DocumentID("doc_a1")
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        try store.writeStoredApplied(text, of: id.rawValue)
        let error = try #require(throws: (any Error).self) { try DocumentStoreConformanceTests.reloadedDocument(store) }
        #expect("\(error)".contains("doc_a1"), "\(error)")
        #expect("\(error)".contains("applied op ids"), "\(error)")
        #expect(try store.reloaded().documents.count == 1)
    }

    /// The other JSON the stores write holds client keys compared by bytes: a `userInfo` merged
    /// from `setUserInfo`s of `caf\u{E9}` and `cafe\u{301}` has both, and reloads with both
    /// (its text was refused on load, and the session came back without its `userInfo`).
    @Test(arguments: StoreKind.tested)
    func aUserInfoWithKeysEqualOnlyCanonicallySurvivesAReload(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        var session = Fixtures.bareSession()
        session.userInfo = JSONObject(uniqueKeysWithValues: [("caf\u{E9}", .int(1)), ("cafe\u{301}", .int(2))])
        try store.apply([.putSession(session)])
        #expect(try store.reloaded().sessions == [session])
    }
}
