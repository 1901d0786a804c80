import Foundation
import PanesCore
import PanesJSON
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// Rights per document through the real binary over real sockets, on both stores: every way
/// around them is refused with nothing changed, and changes reach live windows at once.
@Suite struct DocumentRightsEndToEndTests {
    /// A server with `--auth tokens`: Ed and Eve edit acme, Vic views it, Gus owns globex.
    static func server(_ store: TestStore, folder: URL) throws -> ServerProcess {
        let tokens = folder.appendingPathComponent("tokens.json")
        try Data(JSONCodec.encode(["tokens": [
            ["token": "t-ed", "user": "ed", "name": "Ed", "workspaces": ["acme": "editor"]],
            ["token": "t-eve", "user": "eve", "name": "Eve", "workspaces": ["acme": "editor"]],
            ["token": "t-vic", "user": "vic", "name": "Vic", "workspaces": ["acme": "viewer"]],
            ["token": "t-gus", "user": "gus", "name": "Gus", "workspaces": ["globex": "owner"]],
        ]])).write(to: tokens)
        return try ServerProcess(store: store, extra: ["--auth", "tokens", "--tokens", tokens.path])
    }

    static func client(_ server: ServerProcess, _ token: String, workspace: String = "acme") throws -> TestClient {
        let client = try server.client()
        _ = client.connect(["auth": ["token": .string(token)], "workspace": .string(workspace)])
        return client
    }

    static func edit(_ client: TestClient, _ id: String, revision: Int64, _ operation: JSONValue, _ opId: String) -> JSONValue {
        client.request("edit", ["document": .string(id), "revision": .int(revision), "operation": operation,
                                "opId": .string(opId)])
    }

    @Test(arguments: TestStore.endToEnd) func aDowngradeReachesTheLiveWindowAndEveryWayAroundIsRefused(_ store: TestStore) throws {
        let folder = ServerProcess.tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try Self.server(store, folder: folder)
        let ed = try Self.client(server, "t-ed"), eve = try Self.client(server, "t-eve")
        let id = DocumentsEndToEndTests.create(ed, text: "hello")
        #expect(DocumentsEndToEndTests.open(ed, id)["result"]?["role"] == "owner")
        #expect(DocumentsEndToEndTests.open(eve, id)["result"]?["role"] == "editor")
        #expect(eve.request("observeDocuments")["result"]?["documents"]?.arrayValue?.count == 1)
        #expect(Self.edit(eve, id, revision: 0, [5, "!"], "eve:1")["result"]?["revision"] == 1)

        // Only owners share.
        let notOwner = eve.request("shareDocument", ["document": .string(id), "user": "eve", "role": "owner"])
        #expect(notOwner.errorCode == "forbidden")

        // Downgraded to viewer: the live window hears it at once; the resent and new edits are refused.
        #expect(ed.request("shareDocument", ["document": .string(id), "user": "eve", "role": "viewer"])["ok"] == true)
        #expect(eve.event("documentAccessChanged")?["role"] == "viewer")
        #expect(Self.edit(eve, id, revision: 0, [5, "!"], "eve:1")["result"]?["duplicate"] == nil)
        let refused = Self.edit(eve, id, revision: 1, [6, "?"], "eve:2")
        #expect(refused.errorCode == "forbidden")
        #expect(refused["error"]?["message"]?.stringValue?.contains("viewer") == true)

        // Taken away: closed for the window, gone from its list, not found by id.
        #expect(ed.request("shareDocument", ["document": .string(id), "user": "eve", "role": "none"])["ok"] == true)
        #expect(eve.event("documentAccessChanged")?["role"] == "none")
        #expect(eve.next { $0["type"] == "documentsChanged" && $0["change"] == "unshared" }?["document"]?["id"] == .string(id))
        #expect(DocumentsEndToEndTests.open(eve, id).errorCode == "document_not_found")
        #expect(DocumentsEndToEndTests.open(eve, "doc_0123456789abcdef01234567").errorCode == "document_not_found")

        // A link: opens it for Eve, until it is revoked.
        let created = ed.request("createDocumentLink", ["document": .string(id), "role": "viewer"])
        let token = created["result"]?["token"] ?? .null
        let link = created["result"]?["link"]?["id"] ?? .null
        let opened = eve.request("openDocument", ["document": .string(id), "link": token])
        #expect(opened["result"]?["role"] == "viewer")
        #expect(opened["result"]?["text"] == "hello!")
        #expect(Self.edit(eve, id, revision: 1, [6, "?"], "eve:3").errorCode == "forbidden")
        // Another workspace's scene with the real token, and a guessed token.
        let gus = try Self.client(server, "t-gus", workspace: "globex")
        #expect(gus.request("openDocument", ["document": .string(id), "link": token]).errorCode == "forbidden")
        let guessed = try Self.client(server, "t-vic")
        _ = ed.request("shareDocument", ["document": .string(id), "user": "vic", "role": "none"])
        #expect(guessed.request("openDocument", ["document": .string(id), "link": "pdl_00000000000000000000000000000000"])
                    .errorCode == "forbidden")
        #expect(ed.request("revokeDocumentLink", ["document": .string(id), "link": link])["ok"] == true)
        #expect(eve.event("documentAccessChanged")?["role"] == "none")
        let revoked = eve.request("openDocument", ["document": .string(id), "link": token])
        #expect(revoked.errorCode == "forbidden")
        #expect(revoked["error"]?["message"]?.stringValue?.contains("revoked") == true)

        // An expired link: the window that used it loses the document when it expires.
        let short = ed.request("createDocumentLink", ["document": .string(id), "role": "editor", "expiresInMs": 1_000])
        #expect(eve.request("openDocument", ["document": .string(id), "link": short["result"]?["token"] ?? .null])["result"]?["role"]
                    == "editor")
        #expect(eve.event("documentAccessChanged", timeout: 10)?["role"] == "none")
        let expired = eve.request("openDocument", ["document": .string(id), "link": short["result"]?["token"] ?? .null])
        #expect(expired["error"]?["message"]?.stringValue?.contains("expired") == true)

        // Nothing of it changed the text; the grants are kept across a restart.
        #expect(DocumentsEndToEndTests.open(ed, id)["result"]?["text"] == "hello!")
        server.kill(SIGTERM)
        server.wait()
        let restarted = try server.restarted(extra: ["--auth", "tokens", "--tokens",
                                                     folder.appendingPathComponent("tokens.json").path])
        let back = try Self.client(restarted, "t-eve")
        #expect(DocumentsEndToEndTests.open(back, id).errorCode == "document_not_found")
        #expect(back.request("observeDocuments")["result"]?["documents"] == [])
        let owner = try Self.client(restarted, "t-ed")
        let shares = owner.request("listDocumentShares", ["document": .string(id)])["result"]
        #expect(shares?["grants"]?.arrayValue?.map { $0["role"] } == ["none", "none"])
        #expect(shares?["links"]?.arrayValue?.count == 2)
        #expect(!"\(shares ?? .null)".contains(token.stringValue ?? "-"))
        // Given back: the workspace role holds for Eve again.
        #expect(owner.request("unshareDocument", ["document": .string(id), "user": "eve"])["result"]?["grants"]?
                    .arrayValue?.map { $0["user"] } == ["vic"])
        #expect(DocumentsEndToEndTests.open(back, id)["result"]?["role"] == "editor")
    }
}
