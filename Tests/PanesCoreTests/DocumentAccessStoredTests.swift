@testable import PanesCore
import Testing

/// A document's stored grants read back, and what a damaged row does: fail closed.
@Suite struct DocumentAccessStoredTests {
    let record = DocumentRecord(id: DocumentID("doc_1"), workspace: "w", title: "T", createdAt: 0, createdBy: "carol",
                                modifiedAt: 0)

    @Test func grantsReadBackAsWritten() throws {
        let written = DocumentAccess(grants: [DocumentGrant(user: "bob", role: .none, grantedBy: "carol", grantedAt: 1)],
                                     version: 1)
        let read = DocumentAccess(grants: written.grantsJSON, links: written.linksJSON, version: 1)
        #expect(read == written)
        var rights = DocumentRights()
        rights.set(record.id, read)
        #expect(rights.role(of: record, user: "bob", workspaceRole: .editor) == nil, "a none grant keeps bob out")
    }

    @Test(arguments: [JSONValue.string("not an array"), .array([.object(["user": "bob", "role": "nobody"])]), .null])
    func aDamagedGrantsColumnClosesTheDocumentToAllButWorkspaceOwners(_ damaged: JSONValue) throws {
        let read = DocumentAccess(grants: damaged, links: .array([]), version: 1)
        #expect(read.unreadable)
        var rights = DocumentRights()
        rights.set(record.id, read)
        #expect(rights.role(of: record, user: "bob", workspaceRole: .editor) == nil)
        #expect(rights.role(of: record, user: "carol", workspaceRole: .viewer) == nil, "not even its creator")
        #expect(rights.role(of: record, user: "ann", workspaceRole: .owner) == .owner)
    }
}
