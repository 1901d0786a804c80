import PanesCore
import PanesCoreTestSupport
import Testing

/// The document list: observing it, and creating, renaming and deleting documents.
@Suite struct DocumentListTests {
    static let tokens = Authenticator.tokens([
        "t-ada": .init(user: "ada", name: "Ada", workspaces: ["acme": .owner, "globex": .editor]),
        "t-ed": .init(user: "ed", name: "Ed", workspaces: ["acme": .editor]),
        "t-vic": .init(user: "vic", name: "Vic", workspaces: ["acme": .viewer]),
    ])

    static func connect(_ harness: inout HubHarness, token: String, workspace: String = "acme") -> ConnectionID {
        harness.connect(["auth": ["token": .string(token)], "workspace": .string(workspace)]).0
    }

    @Test func observingListsTheWorkspacesDocumentsSortedByTitle() {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        let b = harness.createDocument(tab, title: "beta", text: "héllo 😀")
        let a = harness.createDocument(tab, title: "Alpha")

        let reply = harness.request(tab, "observeDocuments")
        let list = reply["result"]?["documents"]?.arrayValue ?? []
        #expect(list.map { $0["id"] } == [.string(a), .string(b)])
        let beta = list[1]
        #expect(beta["title"] == "beta")
        #expect(beta["kind"] == "text")
        #expect(beta["length"] == 7)  // scalars: "héllo 😀"
        #expect(beta["revision"] == 0)
        #expect(beta["createdBy"] == "alice")
        #expect(beta["createdAt"] == .int(harness.clock.now))
        #expect(beta["modifiedAt"] == .int(harness.clock.now))
        #expect(beta["participants"] == [])
    }

    @Test func observersHearCreateRenameAndDeleteFromAnyScene() {
        var harness = HubHarness()
        let (watcher, _) = harness.connect(name: "alice")
        let (other, _) = harness.connect(name: "bob")
        _ = harness.request(watcher, "observeDocuments")

        let created = harness.send(other, "createDocument", ["title": "Plan"])
        let id = created.events(to: watcher, named: "documentsChanged").first?["document"]?["id"]?.stringValue ?? ""
        #expect(created.events(to: watcher, named: "documentsChanged").first?["change"] == "created")
        // The creator does not observe, so it hears only its reply.
        #expect(created.events(to: other, named: "documentsChanged").isEmpty)

        let renamed = harness.send(other, "renameDocument", ["document": .string(id), "title": "Plan (final)"])
        let renamedEvent = renamed.events(to: watcher, named: "documentsChanged").first
        #expect(renamedEvent?["change"] == "renamed")
        #expect(renamedEvent?["document"]?["title"] == "Plan (final)")

        let deleted = harness.send(other, "deleteDocument", ["document": .string(id)])
        let deletedEvent = deleted.events(to: watcher, named: "documentsChanged").first
        #expect(deletedEvent?["change"] == "deleted")
        #expect(deletedEvent?["document"]?["id"] == .string(id))
        #expect(deleted.messages(to: other).last?["result"] == ["document": .string(id)])
    }

    @Test func unobservingStopsTheEvents() {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        _ = harness.request(tab, "observeDocuments")
        #expect(harness.request(tab, "unobserveDocuments")["result"] == [:])
        let created = harness.send(tab, "createDocument", ["title": "Quiet"])
        #expect(created.events(to: tab, named: "documentsChanged").isEmpty)
    }

    @Test func modificationsAreAnnouncedAtMostOncePerInterval() {
        var settings = Settings()
        settings.documentListIntervalMs = 1_000
        var harness = HubHarness(settings: settings)
        let (watcher, _) = harness.connect(name: "bob")
        let (writer, _) = harness.connect()
        let id = harness.createDocument(writer)
        _ = harness.openDocument(writer, id)
        _ = harness.request(watcher, "observeDocuments")

        #expect(harness.edit(writer, id, revision: 0, ["x"], opId: "w:1")["ok"] == true)
        #expect(harness.edit(writer, id, revision: 1, [1, "x"], opId: "w:2")["ok"] == true)
        // Edits themselves announce nothing; the tick does, once for both.
        let first = harness.run(.tick)
        let modified = first.events(to: watcher, named: "documentsChanged")
        #expect(modified.count == 1)
        #expect(modified.first?["change"] == "modified")
        #expect(modified.first?["document"]?["revision"] == 2)
        #expect(modified.first?["document"]?["length"] == 2)

        _ = harness.edit(writer, id, revision: 2, [2, "y"], opId: "w:3")
        harness.clock.advance(999)
        #expect(harness.run(.tick).events(to: watcher, named: "documentsChanged").isEmpty)
        harness.clock.advance(1)
        let later = harness.run(.tick).events(to: watcher, named: "documentsChanged")
        #expect(later.map { $0["document"]?["revision"] } == [3])
        #expect(harness.run(.tick).events(to: watcher, named: "documentsChanged").isEmpty)
    }

    @Test func aTitleMustBeOneTo256Bytes() {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        #expect(harness.request(tab, "createDocument", ["title": ""]).errorCode == "invalid_field")
        #expect(harness.request(tab, "createDocument", [:]).errorCode == "missing_field")
        let long = String(repeating: "é", count: 129)  // 258 bytes
        #expect(harness.request(tab, "createDocument", ["title": .string(long)]).errorCode == "invalid_field")
        #expect(harness.request(tab, "createDocument", ["title": .string(String(repeating: "é", count: 128))])["ok"] == true)
        let id = harness.createDocument(tab)
        #expect(harness.request(tab, "renameDocument", ["document": .string(id), "title": ""]).errorCode == "invalid_field")
        #expect(harness.request(tab, "createDocument", ["title": 7])["error"]?["field"] == "title")
    }

    @Test func initialTextOverTheLimitIsRefused() {
        var settings = Settings()
        settings.maxDocumentScalars = 1_024
        var harness = HubHarness(settings: settings)
        let (tab, _) = harness.connect()
        let reply = harness.request(tab, "createDocument", ["title": "Big", "text": .string(String(repeating: "😀", count: 1_025))])
        #expect(reply.errorCode == "too_large")
        #expect(reply["error"]?["message"]?.stringValue?.contains("maxDocumentScalars") == true)
        #expect(harness.hub.documentCounts.stored == 0)
        #expect(harness.request(tab, "createDocument", ["title": "Fits", "text": .string(String(repeating: "😀", count: 1_024))])["ok"] == true)
    }

    @Test func aWorkspaceHoldsAtMostMaxDocumentsPerWorkspace() {
        var settings = Settings()
        settings.maxDocumentsPerWorkspace = 2
        var harness = HubHarness(settings: settings)
        let (tab, _) = harness.connect()
        _ = harness.createDocument(tab)
        let second = harness.createDocument(tab)
        let reply = harness.request(tab, "createDocument", ["title": "Third"])
        #expect(reply.errorCode == "too_many")
        #expect(reply["error"]?["message"]?.stringValue?.contains("maxDocumentsPerWorkspace") == true)
        // Another workspace has its own count.
        let (elsewhere, _) = harness.connect(["workspace": "globex"])
        #expect(harness.request(elsewhere, "createDocument", ["title": "Mine"])["ok"] == true)
        _ = harness.request(tab, "deleteDocument", ["document": .string(second)])
        #expect(harness.request(tab, "createDocument", ["title": "Third"])["ok"] == true)
    }

    @Test func documentsOfAnotherWorkspaceAreInvisible() {
        var harness = HubHarness(authenticator: Self.tokens)
        let acme = Self.connect(&harness, token: "t-ada")
        let globex = Self.connect(&harness, token: "t-ada", workspace: "globex")
        let id = harness.createDocument(acme, title: "Secret")

        #expect(harness.request(globex, "observeDocuments")["result"]?["documents"] == [])
        let requests: [(String, JSONObject)] = [
            ("openDocument", [:]), ("renameDocument", ["title": "x"]), ("deleteDocument", [:]), ("closeDocument", [:]),
            ("setPresence", [:]),
        ]
        for (type, extra) in requests {
            var fields = extra
            fields["document"] = .string(id)
            let reply = harness.request(globex, type, fields)
            #expect(reply.errorCode == "document_not_found", "\(type)")
        }
        let edit = harness.edit(globex, id, revision: 0, ["x"], opId: "g:1")
        #expect(edit.errorCode == "document_not_found")
        #expect(harness.hub.documentIsVisible(id, inWorkspace: "acme"))
        #expect(!harness.hub.documentIsVisible(id, inWorkspace: "globex"))
        #expect(!harness.hub.documentIsVisible("doc_nope", inWorkspace: "acme"))
        // Nothing changed in acme.
        #expect(harness.request(acme, "observeDocuments")["result"]?["documents"]?.arrayValue?.first?["title"] == "Secret")
    }

    @Test func viewersMayListButNotCreateRenameOrDelete() {
        var harness = HubHarness(authenticator: Self.tokens)
        let owner = Self.connect(&harness, token: "t-ada")
        let viewer = Self.connect(&harness, token: "t-vic")
        let id = harness.createDocument(owner)

        #expect(harness.request(viewer, "observeDocuments")["result"]?["documents"]?.arrayValue?.count == 1)
        let create = harness.request(viewer, "createDocument", ["title": "Mine"])
        #expect(create.errorCode == "forbidden")
        #expect(create["error"]?["action"] == "giveUp")
        #expect(harness.request(viewer, "renameDocument", ["document": .string(id), "title": "x"]).errorCode == "forbidden")
        #expect(harness.request(viewer, "deleteDocument", ["document": .string(id)]).errorCode == "forbidden")
        #expect(harness.hub.documentCounts.stored == 1)
        #expect(harness.request(owner, "observeDocuments")["result"]?["documents"]?.arrayValue?.first?["title"] == "Plan")
        // An editor may.
        let editor = Self.connect(&harness, token: "t-ed")
        #expect(harness.request(editor, "renameDocument", ["document": .string(id), "title": "Ed's"])["ok"] == true)
    }

    @Test func createRenameAndDeleteArePersistedBeforeTheyAreAnnounced() throws {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        _ = harness.request(tab, "observeDocuments")
        let created = harness.send(tab, "createDocument", ["title": "Plan", "text": "hi"])
        guard case .persist(let commands)? = created.first, case .createDocument(let record, let text)? = commands.first else {
            Issue.record("create did not persist first: \(created)")
            return
        }
        #expect(record.title == "Plan")
        #expect(text == "hi")
        #expect(record.length == 2)
        let id = record.id.rawValue

        let renamed = harness.send(tab, "renameDocument", ["document": .string(id), "title": "New"])
        #expect(renamed.first == .persist([.renameDocument(record.id, title: "New")]))
        let deleted = harness.send(tab, "deleteDocument", ["document": .string(id)])
        #expect(deleted.first == .persist([.deleteDocument(record.id)]))
        #expect(try harness.store.loadState().documents.isEmpty)
    }

    @Test func renamingToTheSameTitleChangesNothing() {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        let id = harness.createDocument(tab, title: "Same")
        _ = harness.request(tab, "observeDocuments")
        let produced = harness.send(tab, "renameDocument", ["document": .string(id), "title": "Same"])
        #expect(produced.persisted.isEmpty)
        #expect(produced.events(to: tab, named: "documentsChanged").isEmpty)
        #expect(produced.messages(to: tab).last?["result"]?["document"]?["title"] == "Same")
    }

    @Test func unknownDocumentsAreNotFound() {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        for type in ["renameDocument", "deleteDocument", "openDocument", "closeDocument"] {
            let reply = harness.request(tab, type, ["document": "doc_missing", "title": "x"])
            #expect(reply.errorCode == "document_not_found", "\(type)")
            #expect(reply["error"]?["field"] == "document")
            #expect(reply["error"]?["action"] == "refresh")
        }
        #expect(harness.request(tab, "deleteDocument", [:]).errorCode == "missing_field")
        #expect(harness.request(tab, "deleteDocument", ["document": ""]).errorCode == "invalid_field")
        #expect(harness.request(tab, "deleteDocument", ["document": 12]).errorCode == "invalid_field")
    }

    @Test func listObserversHearWhoJoinsAndLeaves() {
        var harness = HubHarness()
        let (watcher, _) = harness.connect(name: "bob")
        let (tab, _) = harness.connect()
        let id = harness.createDocument(tab)
        _ = harness.request(watcher, "observeDocuments")

        let opened = harness.send(tab, "openDocument", ["document": .string(id)])
        let joined = opened.events(to: watcher, named: "documentsChanged")
        #expect(joined.first?["change"] == "presence")
        #expect(joined.first?["document"]?["participants"]?.arrayValue?.first?["user"] == "alice")
        #expect(joined.first?["document"]?["participants"]?.arrayValue?.first?["name"] == "alice")

        let named = harness.send(tab, "setPresence", ["document": .string(id), "name": "Alice", "color": "#3b82f6"])
        let renamed = named.events(to: watcher, named: "documentsChanged").first?["document"]?["participants"]?.arrayValue?.first
        #expect(renamed?["name"] == "Alice")
        #expect(renamed?["color"] == "#3b82f6")
        // Moving the caret is not news for the list.
        let moved = harness.send(tab, "setPresence", ["document": .string(id), "selection": ["anchor": 0, "head": 0]])
        #expect(moved.events(to: watcher, named: "documentsChanged").isEmpty)

        let closed = harness.run(.closed(tab, abnormal: true))
        let left = closed.events(to: watcher, named: "documentsChanged")
        #expect(left.first?["change"] == "presence")
        #expect(left.first?["document"]?["participants"] == [])
    }

    @Test func observationsEndWithTheScene() {
        var harness = HubHarness()
        let (watcher, _) = harness.connect()
        let (tab, _) = harness.connect()
        _ = harness.request(watcher, "observeDocuments")
        harness.run(.closed(watcher, abnormal: false))
        let created = harness.send(tab, "createDocument", ["title": "After"])
        #expect(created.messages(to: watcher).isEmpty)
    }
}
