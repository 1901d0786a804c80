import PanesCore
import PanesCoreTestSupport
import Testing

/// A deleted document leaves no trace in any session of any user: switcher titles and
/// snapshots, restoration activities, and what a restart or a reconnect finds (issue 13, 3).
@Suite struct DocumentReferencesTests {
    static let title = "Secret plan"
    static let text = "launch codes 1234"

    /// Shows the document in the scene's window, as the web app does: opens it, then saves the
    /// window's activity with its own note.
    static func show(_ harness: inout HubHarness, _ scene: ConnectionID, _ id: String, note: String) {
        _ = harness.openDocument(scene, id)
        _ = harness.request(scene, "updateActivity", ["activity": [
            "activityType": "panes.document", "title": .string(title), "targetContentIdentifier": .string(id),
            "userInfo": ["note": .string(note), "scroll": 40],
        ]])
    }

    static func stored(_ harness: HubHarness, _ session: String) throws -> SceneSession {
        try #require(try harness.store.loadState().sessions.first { $0.id.rawValue == session })
    }

    static func sessionID(_ result: JSONValue) -> String {
        result["session"]?["persistentIdentifier"]?.stringValue ?? ""
    }

    @Test func deletingForgetsTheDocumentInEverySessionOfEveryUser() throws {
        var harness = HubHarness()
        let (alice, aliceResult) = harness.connect(name: "alice")
        let (bob, bobResult) = harness.connect(name: "bob")
        let (switcher, _) = harness.connect(name: "bob")
        let id = harness.createDocument(alice, title: Self.title, text: Self.text)
        Self.show(&harness, alice, id, note: "alice's own words")
        Self.show(&harness, bob, id, note: "bob's own words")
        harness.run(.closed(bob, abnormal: false))
        _ = harness.request(switcher, "listSessions", ["watch": true])
        #expect("\(try harness.store.loadState().sessions)".contains(Self.text), "the preview is stored before")

        let deleted = harness.send(alice, "deleteDocument", ["document": .string(id)])
        for (result, note) in [(aliceResult, "alice's own words"), (bobResult, "bob's own words")] {
            let session = try Self.stored(harness, Self.sessionID(result))
            #expect(session.title == "")
            #expect(session.snapshot == nil)
            #expect(session.restoration?.activity.targetContentIdentifier == nil)
            #expect(session.restoration?.activity.title == nil)
            // The window's own state stays: it holds nothing of the document.
            #expect(session.restoration?.activity.userInfo == ["note": .string(note), "scroll": 40])
            #expect(session.restoration?.metadata.documentGone == true)
        }
        let everything = "\(try harness.store.loadState())"
        #expect(!everything.contains(Self.title) && !everything.contains(Self.text) && !everything.contains(id))

        // Bob's switcher, in another window, shows the closed window without the document.
        let listed = deleted.events(to: switcher, named: "sessionsChanged").last?["sessions"]?.arrayValue ?? []
        let entry = listed.first { $0["persistentIdentifier"] == .string(Self.sessionID(bobResult)) }
        #expect(entry?["title"] == "")
        #expect(entry?["snapshot"] == nil)
        #expect(entry?["targetContentIdentifier"] == nil)
    }

    @Test func theDocumentAndEveryReferenceToItGoInOneBatch() {
        var harness = HubHarness()
        let (alice, aliceResult) = harness.connect(name: "alice")
        let (bob, bobResult) = harness.connect(name: "bob")
        let id = harness.createDocument(alice, title: Self.title, text: Self.text)
        // Before alice's window shows it, so the activation makes a window rather than bringing hers forward.
        let (window, dedicated) = DocumentDeletionTests.dedicatedWindow(&harness, from: alice, document: id)
        harness.run(.closed(window, abnormal: false))
        Self.show(&harness, alice, id, note: "")
        Self.show(&harness, bob, id, note: "")

        let deleted = harness.send(alice, "deleteDocument", ["document": .string(id)])
        let batches = deleted.compactMap { effect -> [StoreCommand]? in
            if case .persist(let commands) = effect, commands.contains(.deleteDocument(DocumentID(id))) { commands } else { nil }
        }
        #expect(batches.count == 1)
        let batch = batches.first ?? []
        #expect(batch.contains(.deleteSession(SessionID(dedicated))))
        let rewritten = batch.compactMap { command -> String? in
            if case .putSession(let session) = command { session.id.rawValue } else { nil }
        }
        #expect(Set(rewritten) == [Self.sessionID(aliceResult), Self.sessionID(bobResult)])
        // Nothing else stores the dedicated session's deletion again.
        #expect(deleted.persisted.filter { $0 == .deleteSession(SessionID(dedicated)) }.count == 1)
    }

    @Test func aWindowWhoseDocumentWasDeletedComesBackCleanWithDocumentGone() {
        var harness = HubHarness()
        let (alice, _) = harness.connect(name: "alice")
        let (bob, bobResult) = harness.connect(name: "bob")
        let id = harness.createDocument(alice, title: Self.title, text: Self.text)
        Self.show(&harness, bob, id, note: "bob's own words")
        harness.run(.closed(bob, abnormal: false))
        _ = harness.request(alice, "deleteDocument", ["document": .string(id)])

        let (_, resumed) = harness.connect(["session": HubHarness.credentials(bobResult)], name: "bob")
        #expect(resumed["restoration"]?["status"] == "document_gone")
        #expect(resumed["session"]?["stateRestorationActivity"] == .null)
        #expect(resumed["session"]?["restorationMetadata"] == nil)
        #expect(resumed["session"]?["title"] == "")
    }

    @Test func aSaveThatRacedTheDeletionIsForgottenAtTheNextConnect() throws {
        var harness = HubHarness()
        let (alice, aliceResult) = harness.connect(name: "alice")
        let id = harness.createDocument(alice, title: Self.title, text: Self.text)
        _ = harness.request(alice, "deleteDocument", ["document": .string(id)])
        // Sent before the window heard of the deletion; it arrives after it.
        _ = harness.request(alice, "updateActivity", ["activity": [
            "activityType": "panes.document", "title": .string(Self.title), "targetContentIdentifier": .string(id),
            "userInfo": ["note": "mine"],
        ]])
        harness.run(.closed(alice, abnormal: false))

        let (_, resumed) = harness.connect(["session": HubHarness.credentials(aliceResult)], name: "alice")
        #expect(resumed["restoration"]?["status"] == "document_gone")
        #expect(resumed["session"]?["stateRestorationActivity"] == .null)
        let session = try Self.stored(harness, Self.sessionID(aliceResult))
        #expect(session.restoration?.activity.targetContentIdentifier == nil)
        #expect(session.restoration?.activity.title == nil)
        #expect(session.restoration?.activity.userInfo == ["note": "mine"])
    }

    @Test func aRestartForgetsDocumentsThatAreNotStored() throws {
        // As a crash between a deletion and its sessions' writes, or an older build, left it.
        let store = MemoryStore()
        let owner = OwnerKey(workspace: "default", user: "alice")
        let metadata = RestorationMetadata(savedAt: 1_700_000_000_000, serverVersion: "old", protocolVersion: 1,
                                           clientVersion: "web")
        var harness = HubHarness(store: store)
        let (scene, result) = harness.connect(name: "alice")
        let kept = harness.createDocument(scene, title: "Kept", text: "still here")
        harness.run(.closed(scene, abnormal: false))
        var stale = try Self.stored(harness, Self.sessionID(result))
        stale.title = Self.title
        stale.snapshot = ["text": .string(Self.text)]
        stale.restoration = Restoration(activity: Activity(activityType: "panes.document", title: Self.title,
                                                           userInfo: ["note": "mine"], targetContentIdentifier: "doc_gone"),
                                        metadata: metadata)
        let other = SceneSession(id: SessionID("other"), secretHash: .unmatchable, owner: owner, role: .window,
                                 configuration: "workspace", title: "Kept", restoration: Restoration(
                                     activity: Activity(activityType: "panes.document", targetContentIdentifier: kept),
                                     metadata: metadata), createdAt: 1, lastActiveAt: harness.clock.now)
        try store.apply([.putSession(stale), .putSession(other)])

        var restarted = try harness.restarted()
        let started = restarted.start()
        #expect(started.persisted.count == 1, "only the session that refers to a missing document is rewritten")
        let everything = "\(try store.loadState())"
        #expect(!everything.contains(Self.title) && !everything.contains(Self.text) && !everything.contains("doc_gone"))
        #expect(try Self.stored(restarted, "other").restoration?.activity.targetContentIdentifier == kept)
        #expect(try Self.stored(restarted, Self.sessionID(result)).restoration?.activity.userInfo == ["note": "mine"])

        let (_, resumed) = restarted.connect(["session": HubHarness.credentials(result)], name: "alice")
        #expect(resumed["restoration"]?["status"] == "document_gone")
        #expect(resumed["session"]?["stateRestorationActivity"] == .null)
    }

    @Test func theDeletionSaysWhoDeletedIt() {
        var harness = HubHarness()
        let (bob, bobResult) = harness.connect(name: "bob")
        let (alice, _) = harness.connect(name: "alice")
        _ = harness.request(alice, "observeDocuments")
        let id = harness.createDocument(bob, title: Self.title)
        _ = harness.openDocument(alice, id)

        let deleted = harness.send(bob, "deleteDocument", ["document": .string(id)])
        let by: JSONValue = ["user": "bob", "name": "bob", "scene": bobResult["scene"] ?? .null]
        #expect(deleted.events(to: alice, named: "documentDeleted").first?["by"] == by)
        let change = deleted.events(to: alice, named: "documentsChanged").first
        #expect(change?["change"] == "deleted")
        #expect(change?["by"] == by)
    }
}
