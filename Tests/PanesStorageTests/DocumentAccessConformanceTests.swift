import PanesCore
import PanesStorageTestSupport
import Testing

/// Rights per document in every store: a document's grants and links are stored whole, read
/// back at start, go with their document, and (shared stores) reach other nodes with its record.
@Suite struct DocumentAccessConformanceTests {
    static let access = DocumentAccess(
        grants: [DocumentGrant(user: "jos\u{E9}", role: .viewer, grantedBy: "ed", grantedAt: 1_700_000_000_001),
                 DocumentGrant(user: "jose\u{301}", role: DocumentRole.none, grantedBy: "ed", grantedAt: 1_700_000_000_002)],
        links: [DocumentLink(id: "link_1", tokenHash: String(repeating: "ab", count: 32), role: .editor, createdBy: "ed",
                             createdAt: 1_700_000_000_003, expiresAt: 1_700_000_600_000, revokedAt: 1_700_000_000_004),
                DocumentLink(id: "link_2", tokenHash: String(repeating: "cd", count: 32), role: .viewer, createdBy: "ed",
                             createdAt: 1_700_000_000_005, expiresAt: 1_700_000_600_000)],
        version: 3)

    @Test(arguments: StoreKind.tested)
    func accessRoundTripsAndGoesWithItsDocument(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        try store.apply([.createDocument(Fixtures.document(), text: ""),
                         .createDocument(Fixtures.document(id: "doc_b2"), text: "")])
        try store.apply([.putDocumentAccess(DocumentID("doc_a1"), Self.access),
                         .putDocumentAccess(DocumentID("doc_b2"), Self.access),
                         // A document that is not stored gets nothing.
                         .putDocumentAccess(DocumentID("doc_zz"), Self.access)])
        #expect(try store.reloaded().access == [DocumentID("doc_a1"): Self.access, DocumentID("doc_b2"): Self.access])

        try store.apply([.putDocumentAccess(DocumentID("doc_b2"), DocumentAccess(version: 4)),
                         .deleteDocument(DocumentID("doc_a1"))])
        #expect(try store.reloaded().access == [:])
    }

    @Test(arguments: StoreKind.shared)
    func recordChangesCarryTheAccessOfEachChangedDocument(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let other = try harness.secondNode() ?? store
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        let cursor = try other.loadState().recordCursor
        try store.apply([.putDocumentAccess(DocumentID("doc_a1"), Self.access)])
        let changes = try other.loadRecordChanges(after: cursor)
        #expect(changes.cursor > cursor)
        #expect(changes.documents.map(\.id) == [DocumentID("doc_a1")])
        #expect(changes.access == [DocumentID("doc_a1"): Self.access])

        try store.apply([.putDocumentAccess(DocumentID("doc_a1"), DocumentAccess(version: 4))])
        #expect(try other.loadRecordChanges(after: changes.cursor).access == [DocumentID("doc_a1"): DocumentAccess()])
    }
}
