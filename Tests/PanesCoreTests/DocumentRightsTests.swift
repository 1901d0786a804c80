@_spi(Testing) import PanesCore
import PanesCoreTestSupport
import Testing

/// Rights per document: grants and links on top of the workspace role, refusals that change
/// nothing, and changes that reach open windows and lists at once.
@Suite struct DocumentRightsTests {
    /// Ada owns workspace acme; Ed and Eve are its editors, Vic a viewer; Gus is in globex only.
    static let tokens = Authenticator.tokens([
        "t-ada": .init(user: "ada", name: "Ada", workspaces: ["acme": .owner]),
        "t-ed": .init(user: "ed", name: "Ed", workspaces: ["acme": .editor]),
        "t-eve": .init(user: "eve", name: "Eve", workspaces: ["acme": .editor]),
        "t-vic": .init(user: "vic", name: "Vic", workspaces: ["acme": .viewer]),
        "t-gus": .init(user: "gus", name: "Gus", workspaces: ["globex": .owner]),
    ])

    static func connect(_ harness: inout HubHarness, _ token: String, workspace: String = "acme") -> ConnectionID {
        harness.connect(["auth": ["token": .string(token)], "workspace": .string(workspace)]).0
    }

    static func share(_ harness: inout HubHarness, _ from: ConnectionID, _ document: String, _ user: String,
                      _ role: String) -> JSONValue {
        harness.request(from, "shareDocument", ["document": .string(document), "user": .string(user), "role": .string(role)])
    }

    /// Ed's document, open in Eve's window.
    static func setUp(_ harness: inout HubHarness) -> (ed: ConnectionID, eve: ConnectionID, document: String) {
        let ed = connect(&harness, "t-ed")
        let eve = connect(&harness, "t-eve")
        let document = harness.createDocument(ed, text: "hello")
        return (ed, eve, document)
    }

    @Test func theCreatorOwnsTheDocumentAndTheWorkspaceRoleHoldsForOthers() {
        var harness = HubHarness(authenticator: Self.tokens)
        let (ed, eve, document) = Self.setUp(&harness)
        #expect(harness.openDocument(ed, document)["result"]?["role"] == "owner")
        #expect(harness.openDocument(eve, document)["result"]?["role"] == "editor")
        let vic = Self.connect(&harness, "t-vic")
        #expect(harness.openDocument(vic, document)["result"]?["role"] == "viewer")
        let ada = Self.connect(&harness, "t-ada")
        #expect(harness.openDocument(ada, document)["result"]?["role"] == "owner")
    }

    @Test func aViewersEditIsRefusedNamingWhyAndChangesNothing() {
        var harness = HubHarness(authenticator: Self.tokens)
        let (ed, eve, document) = Self.setUp(&harness)
        #expect(Self.share(&harness, ed, document, "eve", "viewer")["ok"] == true)
        #expect(harness.openDocument(eve, document)["result"]?["role"] == "viewer")
        let reply = harness.edit(eve, document, revision: 0, [5, "!"], opId: "eve:1")
        #expect(reply["error"]?["code"] == "forbidden")
        #expect(reply["error"]?["message"]?.stringValue?.contains("viewer") == true)
        #expect(reply["error"]?["message"]?.stringValue?.contains("read-only") == true)
        #expect(harness.text(of: document) == "hello")
        // A grant raises the workspace role too: Vic, a workspace viewer, made an editor here.
        let vic = Self.connect(&harness, "t-vic")
        #expect(Self.share(&harness, ed, document, "vic", "editor")["ok"] == true)
        _ = harness.openDocument(vic, document)
        #expect(harness.edit(vic, document, revision: 0, [5, "!"], opId: "vic:1")["ok"] == true)
        #expect(harness.text(of: document) == "hello!")
    }

    @Test func aDowngradeReachesTheOpenWindowAtOnceAndAResentEditIsRefused() {
        var harness = HubHarness(authenticator: Self.tokens)
        let (ed, eve, document) = Self.setUp(&harness)
        #expect(harness.openDocument(eve, document)["result"]?["role"] == "editor")
        #expect(harness.edit(eve, document, revision: 0, [5, "!"], opId: "eve:1")["ok"] == true)
        let produced = harness.send(ed, "shareDocument", ["document": .string(document), "user": "eve", "role": "viewer"])
        #expect(produced.events(to: eve, named: "documentAccessChanged").first
                    == ["type": "documentAccessChanged", "document": .string(document), "role": "viewer"])
        // The same operation again (as after a lost reply), and a new one: both refused.
        #expect(harness.edit(eve, document, revision: 0, [5, "!"], opId: "eve:1")["error"]?["code"] == "forbidden")
        #expect(harness.edit(eve, document, revision: 1, [6, "?"], opId: "eve:2")["error"]?["code"] == "forbidden")
        #expect(harness.text(of: document) == "hello!")
        // Back to the workspace role: editing again.
        let back = harness.send(ed, "unshareDocument", ["document": .string(document), "user": "eve"])
        #expect(back.events(to: eve, named: "documentAccessChanged").first?["role"] == "editor")
        #expect(harness.edit(eve, document, revision: 1, [6, "?"], opId: "eve:3")["ok"] == true)
    }

    @Test func takingADocumentAwayClosesItHidesItFromListsAndPresenceAndReadsAsNotFound() {
        var harness = HubHarness(authenticator: Self.tokens)
        let (ed, eve, document) = Self.setUp(&harness)
        _ = harness.openDocument(ed, document)
        _ = harness.openDocument(eve, document)
        #expect(harness.request(eve, "setPresence", ["document": .string(document), "name": "Eve"])["ok"] == true)
        #expect(harness.request(eve, "observeDocuments")["result"]?["documents"]?.arrayValue?.count == 1)
        let produced = harness.send(ed, "shareDocument", ["document": .string(document), "user": "eve", "role": "none"])
        #expect(produced.events(to: eve, named: "documentAccessChanged").first?["role"] == "none")
        #expect(produced.events(to: eve, named: "documentsChanged").first?["change"] == "unshared")
        // Eve's presence left Ed's window.
        #expect(produced.events(to: ed, named: "presence").first?["left"] == true)
        #expect(harness.request(eve, "observeDocuments")["result"]?["documents"] == [])
        for (type, fields) in [("openDocument", [:]), ("renameDocument", ["title": "Mine"]), ("deleteDocument", [:]),
                               ("edit", ["revision": 0, "operation": [5, "!"] as JSONValue, "opId": "eve:9"]),
                               ("listDocumentShares", [:])] as [(String, JSONObject)] {
            var fields = fields
            fields["document"] = .string(document)
            #expect(harness.request(eve, type, fields)["error"]?["code"] == "document_not_found", "\(type)")
        }
        #expect(harness.text(of: document) == "hello")
        // Ed's list still has it, with Ed alone in it.
        let summary = harness.request(ed, "observeDocuments")["result"]?["documents"]?.arrayValue?.first
        #expect(summary?["participantCount"] == 1)
        // Eve's window session forgot it: her switcher keeps neither its title nor its text.
        let sessions = harness.request(eve, "listSessions")["result"]?["sessions"]?.arrayValue ?? []
        #expect(!sessions.isEmpty)
        #expect(sessions.allSatisfy { $0["title"] != "Plan" && !"\($0)".contains("hello") })
        // Given back: Eve's list hears of it.
        let again = harness.send(ed, "unshareDocument", ["document": .string(document), "user": "eve"])
        #expect(again.events(to: eve, named: "documentsChanged").first?["change"] == "shared")
    }

    @Test func onlyOwnersShare() {
        var harness = HubHarness(authenticator: Self.tokens)
        let (ed, eve, document) = Self.setUp(&harness)
        for (type, fields) in [("shareDocument", ["user": "vic", "role": "editor"]), ("unshareDocument", ["user": "ed"]),
                               ("createDocumentLink", ["role": "viewer"]), ("listDocumentShares", [:])]
            as [(String, JSONObject)] {
            var fields = fields
            fields["document"] = .string(document)
            let reply = harness.request(eve, type, fields)
            #expect(reply["error"]?["code"] == "forbidden", "\(type)")
            #expect(reply["error"]?["message"]?.stringValue?.contains("needs owner") == true)
        }
        #expect(harness.request(ed, "listDocumentShares", ["document": .string(document)])["result"]
                    == ["document": .string(document), "grants": [], "links": []])
        // A workspace owner may share any document; a document owner may make another owner.
        let ada = Self.connect(&harness, "t-ada")
        #expect(Self.share(&harness, ada, document, "eve", "owner")["ok"] == true)
        #expect(Self.share(&harness, eve, document, "vic", "editor")["ok"] == true)
    }

    @Test func aLinkOpensTheDocumentWithItsRoleUntilRevoked() {
        var harness = HubHarness(authenticator: Self.tokens)
        let (ed, eve, document) = Self.setUp(&harness)
        _ = Self.share(&harness, ed, document, "eve", "none")
        let fields: JSONObject = ["document": .string(document), "role": "editor", "expiresInMs": 60_000]
        let created = harness.request(ed, "createDocumentLink", fields)
        let token = created["result"]?["token"]?.stringValue ?? ""
        let link = created["result"]?["link"]?["id"]?.stringValue ?? ""
        #expect(token.count >= 64)
        // Only the hash is stored or listed.
        #expect(!"\(harness.store.loadStateOrEmpty().access)".contains(token))
        #expect(harness.request(ed, "listDocumentShares", ["document": .string(document)])["result"]?["links"]?.arrayValue?.first?["id"]
                    == .string(link))

        let opened = harness.request(eve, "openDocument", ["document": .string(document), "link": .string(token)])
        #expect(opened["result"]?["role"] == "editor")
        #expect(harness.edit(eve, document, revision: 0, [5, "!"], opId: "eve:1")["ok"] == true)

        let revoked = harness.send(ed, "revokeDocumentLink", ["document": .string(document), "link": .string(link)])
        #expect(revoked.events(to: eve, named: "documentAccessChanged").first?["role"] == "none")
        #expect(harness.edit(eve, document, revision: 1, [6, "?"], opId: "eve:2")["error"]?["code"] == "document_not_found")
        let again = harness.request(eve, "openDocument", ["document": .string(document), "link": .string(token)])
        #expect(again["error"]?["code"] == "forbidden")
        #expect(again["error"]?["message"]?.stringValue?.contains("revoked") == true)
        #expect(harness.text(of: document) == "hello!")
    }

    @Test func anExpiredLinkClosesTheWindowAndOpensNothing() {
        var harness = HubHarness(authenticator: Self.tokens)
        let (ed, _, document) = Self.setUp(&harness)
        let vic = Self.connect(&harness, "t-vic")
        _ = Self.share(&harness, ed, document, "vic", "none")
        let token = harness.request(ed, "createDocumentLink", ["document": .string(document), "role": "viewer",
                                                               "expiresInMs": 5_000])["result"]?["token"] ?? .null
        #expect(harness.request(vic, "openDocument", ["document": .string(document), "link": token])["result"]?["role"]
                    == "viewer")
        harness.clock.advance(5_000)
        let produced = harness.run(.tick)
        #expect(produced.events(to: vic, named: "documentAccessChanged").first?["role"] == "none")
        let reply = harness.request(vic, "openDocument", ["document": .string(document), "link": token])
        #expect(reply["error"]?["code"] == "forbidden")
        #expect(reply["error"]?["message"]?.stringValue?.contains("expired") == true)
    }

    @Test func aLinkOfAnotherDocumentOrWorkspaceOrAGuessedTokenOpensNothing() {
        var harness = HubHarness(authenticator: Self.tokens)
        let (ed, _, document) = Self.setUp(&harness)
        let other = harness.createDocument(ed, title: "Other")
        let vic = Self.connect(&harness, "t-vic")
        _ = Self.share(&harness, ed, document, "vic", "none")
        let token = harness.request(ed, "createDocumentLink", ["document": .string(other), "role": "editor"])["result"]?["token"]
        // Another document's link.
        let wrong = harness.request(vic, "openDocument", ["document": .string(document), "link": token ?? .null])
        #expect(wrong["error"]?["code"] == "forbidden")
        // A guessed token.
        let guessed = harness.request(vic, "openDocument", ["document": .string(document), "link": "pdl_0123456789abcdef"])
        #expect(guessed["error"]?["code"] == "forbidden")
        #expect(guessed["error"]?["message"] == wrong["error"]?["message"])
        // Another workspace's scene with a real link of acme.
        let gus = Self.connect(&harness, "t-gus", workspace: "globex")
        let foreign = harness.request(gus, "openDocument", ["document": .string(other), "link": token ?? .null])
        #expect(foreign["error"]?["code"] == "forbidden")
        #expect(foreign["error"]?["message"] == .string("the link does not open document \(other) in this workspace"))
        // A guessed document id.
        #expect(harness.openDocument(vic, "doc_000000000000000000000099")["error"]?["code"] == "document_not_found")
        #expect(harness.request(vic, "observeDocuments")["result"]?["documents"]?.arrayValue?.map { $0["id"] } == [.string(other)])
    }

    @Test func grantsAndLinksSurviveARestart() throws {
        var harness = HubHarness(authenticator: Self.tokens)
        let (ed, _, document) = Self.setUp(&harness)
        _ = Self.share(&harness, ed, document, "eve", "viewer")
        let token = harness.request(ed, "createDocumentLink", ["document": .string(document), "role": "editor"])["result"]?["token"]
        var restarted = try harness.restarted(ids: .sequential(from: 1_000))
        _ = restarted.start()
        let eve = Self.connect(&restarted, "t-eve")
        #expect(restarted.openDocument(eve, document)["result"]?["role"] == "viewer")
        let vic = Self.connect(&restarted, "t-vic")
        #expect(restarted.request(vic, "openDocument", ["document": .string(document), "link": token ?? .null])["result"]?["role"]
                    == "editor")
    }

    @Test func sharesAreBoundedBySetting() {
        var settings = Settings()
        settings.maxSharesPerDocument = 2
        var harness = HubHarness(settings: settings, authenticator: Self.tokens)
        let (ed, _, document) = Self.setUp(&harness)
        #expect(Self.share(&harness, ed, document, "eve", "viewer")["ok"] == true)
        #expect(Self.share(&harness, ed, document, "vic", "viewer")["ok"] == true)
        let reply = Self.share(&harness, ed, document, "zed", "viewer")
        #expect(reply["error"]?["code"] == "too_many")
        #expect(reply["error"]?["message"]?.stringValue?.contains("maxSharesPerDocument") == true)
        // Changing an existing grant needs no room.
        #expect(Self.share(&harness, ed, document, "vic", "editor")["ok"] == true)
    }
}

/// Rights across two nodes of one store.
@Suite struct ClusterDocumentRightsTests {
    /// Two nodes of one store: Ed's document made on a, Eve connected to b, which has read it.
    static func setUp() -> (a: HubHarness, b: HubHarness, ed: ConnectionID, eve: ConnectionID, document: String) {
        let store = MemoryStore()
        var a = HubHarness(authenticator: DocumentRightsTests.tokens, store: store, node: NodeID("a"), ids: .sequential(from: 0))
        var b = HubHarness(authenticator: DocumentRightsTests.tokens, stored: try! store.loadState(), store: store,
                           node: NodeID("b"), ids: .sequential(from: 1 << 40))
        let ed = DocumentRightsTests.connect(&a, "t-ed")
        let document = a.createDocument(ed, text: "hello")
        let eve = DocumentRightsTests.connect(&b, "t-eve")
        _ = TwoNodes.deliver(a.effects, to: &b)
        return (a, b, ed, eve, document)
    }

    @Test func aDowngradeOnOneNodeReachesAWindowOnTheOtherAtOnceAndItsEditsAreRefused() {
        let nodes = Self.setUp()
        var (a, b) = (nodes.a, nodes.b)
        let (ed, eve, document) = (nodes.ed, nodes.eve, nodes.document)
        #expect(b.request(eve, "observeDocuments")["result"]?["documents"]?.arrayValue?.count == 1)
        #expect(b.openDocument(eve, document)["result"]?["role"] == "editor")

        _ = a.send(ed, "shareDocument", ["document": .string(document), "user": "eve", "role": "viewer"])
        var produced = TwoNodes.deliver(a.effects, to: &b)
        #expect(produced.events(to: eve, named: "documentAccessChanged").first?["role"] == "viewer")
        #expect(b.edit(eve, document, revision: 0, [5, "!"], opId: "eve:1")["error"]?["code"] == "forbidden")

        _ = a.send(ed, "shareDocument", ["document": .string(document), "user": "eve", "role": "none"])
        produced = TwoNodes.deliver(a.effects, to: &b)
        #expect(produced.events(to: eve, named: "documentAccessChanged").first?["role"] == "none")
        #expect(produced.events(to: eve, named: "documentsChanged").first?["change"] == "unshared")
        #expect(b.openDocument(eve, document)["error"]?["code"] == "document_not_found")

        // A link made on a revokes on b's window when revoked on a.
        let token = a.request(ed, "createDocumentLink", ["document": .string(document), "role": "viewer"])["result"]?["token"]
        let link = a.request(ed, "listDocumentShares", ["document": .string(document)])["result"]?["links"]?.arrayValue?.first?["id"]
        _ = TwoNodes.deliver(a.effects, to: &b)
        #expect(b.request(eve, "openDocument", ["document": .string(document), "link": token ?? .null])["result"]?["role"]
                    == "viewer")
        _ = a.send(ed, "revokeDocumentLink", ["document": .string(document), "link": link ?? .null])
        produced = TwoNodes.deliver(a.effects, to: &b)
        #expect(produced.events(to: eve, named: "documentAccessChanged").first?["role"] == "none")
        #expect(a.text(of: document) == "hello")
    }
}

extension MemoryStore {
    func loadStateOrEmpty() -> StoredState { (try? loadState()) ?? StoredState() }
}
