import PanesCore
import PanesCoreTestSupport
import Testing

/// Deleting a document reaches every scene that shows it: open scenes are told, dedicated
/// windows showing it are destroyed with `decline`, full-browser windows are told.
@Suite struct DocumentDeletionTests {
    /// A dedicated window (configuration `document`) for the document, connected; returns its
    /// connection and session id.
    static func dedicatedWindow(_ harness: inout HubHarness, from tab: ConnectionID, document id: String)
        -> (ConnectionID, String)
    {
        let activation = harness.request(tab, "requestActivation", [
            "activity": ["activityType": "panes.document.dedicated", "targetContentIdentifier": .string(id)],
        ])
        let (window, result) = harness.connect(["ticket": activation["result"]?["ticket"] ?? .null])
        #expect(result["session"]?["configuration"] == "document")
        _ = harness.request(window, "updateActivity", ["activity": [
            "activityType": "panes.document.dedicated", "targetContentIdentifier": .string(id),
        ]])
        return (window, result["session"]?["persistentIdentifier"]?.stringValue ?? "")
    }

    @Test func everySceneWithTheDocumentOpenIsTold() {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a)
        _ = harness.openDocument(a, id)
        _ = harness.openDocument(b, id)
        let deleted = harness.send(a, "deleteDocument", ["document": .string(id)])
        #expect(deleted.events(to: a, named: "documentDeleted").map { $0["document"] } == [.string(id)])
        #expect(deleted.events(to: b, named: "documentDeleted").count == 1)
        #expect(deleted.messages(to: a).last?["result"] == ["document": .string(id)])
        #expect(harness.hub.documentCounts == (stored: 0, loaded: 0, loading: 0))
        // It is closed for them: nothing more arrives and it cannot be used.
        #expect(harness.request(b, "closeDocument", ["document": .string(id)]).errorCode == "document_not_found")
        #expect(harness.openDocument(b, id).errorCode == "document_not_found")
    }

    @Test func aDedicatedWindowShowingItIsDestroyedWithDecline() {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        let id = harness.createDocument(tab, title: "Compose")
        let (window, session) = Self.dedicatedWindow(&harness, from: tab, document: id)
        _ = harness.openDocument(window, id)

        let deleted = harness.send(tab, "deleteDocument", ["document": .string(id)])
        let messages = deleted.messages(to: window)
        #expect(messages.map { $0["type"] } == ["documentDeleted", "sessionDestroyed"])
        #expect(messages.last?["animation"] == "decline")
        #expect(messages.last?["session"] == .string(session))
        #expect(deleted.closes(window) == [.sessionDestroyed])
        #expect(deleted.persisted.contains(.deleteSession(SessionID(session))))
        #expect(deleted.persisted.first == .deleteDocument(DocumentID(id)))
        // The deleter's window is a browser one and stays.
        #expect(deleted.closes(tab).isEmpty)
    }

    @Test func aDisconnectedDedicatedSessionShowingItIsDiscardedToo() {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        let id = harness.createDocument(tab)
        let (window, session) = Self.dedicatedWindow(&harness, from: tab, document: id)
        harness.run(.closed(window, abnormal: false))
        _ = harness.request(tab, "listSessions", ["watch": true])

        let deleted = harness.send(tab, "deleteDocument", ["document": .string(id)])
        #expect(deleted.persisted.contains(.deleteSession(SessionID(session))))
        let listed = deleted.events(to: tab, named: "sessionsChanged").last?["sessions"]?.arrayValue ?? []
        #expect(!listed.contains { $0["persistentIdentifier"] == .string(session) })
    }

    @Test func aFullBrowserWindowShowingItIsToldAndKept() {
        var harness = HubHarness()
        let (deleter, _) = harness.connect(name: "bob")
        let (browser, result) = harness.connect()
        let id = harness.createDocument(deleter)
        // The window shows the document (its restoration activity says so) but has not opened it.
        _ = harness.request(browser, "updateActivity", ["activity": [
            "activityType": "panes.document", "targetContentIdentifier": .string(id),
        ]])
        let deleted = harness.send(deleter, "deleteDocument", ["document": .string(id)])
        #expect(deleted.events(to: browser, named: "documentDeleted").count == 1)
        #expect(deleted.closes(browser).isEmpty)
        let session = result["session"]?["persistentIdentifier"]?.stringValue ?? ""
        #expect(!deleted.persisted.contains(.deleteSession(SessionID(session))))
    }

    @Test func pendingAnnouncementsOfADeletedDocumentAreDropped() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a)
        _ = harness.openDocument(a, id)
        _ = harness.edit(a, id, revision: 0, ["x"], opId: "a:1")
        _ = harness.request(a, "deleteDocument", ["document": .string(id)])
        _ = harness.request(a, "observeDocuments")
        #expect(harness.run(.tick).events(to: a, named: "documentsChanged").isEmpty)
    }

    @Test func theDocumentAndItsLogAreGoneFromTheStore() throws {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, text: "bye")
        _ = harness.openDocument(a, id)
        _ = harness.edit(a, id, revision: 0, [3, "!"], opId: "a:1")
        _ = harness.request(a, "deleteDocument", ["document": .string(id)])
        #expect(try harness.store.loadDocument(DocumentID(id), retention: 100) == nil)
        #expect(try harness.store.loadState().documents.isEmpty)
    }
}
