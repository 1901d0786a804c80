import PanesCore
import PanesCoreTestSupport
import Testing

/// Opening and closing documents: loads, catch-up after a reconnect, eviction, restarts, and
/// the session keeping the document in its restoration activity.
@Suite struct DocumentOpeningTests {
    @Test func openingGivesTheTextRevisionSummaryAndPresence() {
        var harness = HubHarness()
        let (tab, _) = harness.connect()
        let id = harness.createDocument(tab, title: "Plan", text: "Q3 goals 🎯")
        let result = harness.openDocument(tab, id)["result"]
        #expect(result?["text"] == "Q3 goals 🎯")
        #expect(result?["revision"] == 0)
        #expect(result?["presence"] == [])
        #expect(result?["catchUp"] == nil)
        #expect(result?["document"]?["id"] == .string(id))
        #expect(result?["document"]?["participants"]?.arrayValue?.count == 1)
        #expect(harness.hub.documentCounts.loaded == 1)
    }

    @Test func theFirstOpenLoadsAndLaterOpensWaitForTheSameLoad() {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a, text: "shared")
        harness.completesLoads = false

        let first = harness.send(a, "openDocument", ["document": .string(id)])
        let second = harness.send(b, "openDocument", ["document": .string(id)])
        #expect(first.compactMap { effect -> LoadRequest? in if case .load(let r) = effect { r } else { nil } } == [
            // With an age retention (the default) a load reads every row the store kept.
            .document(DocumentID(id), retention: Int(Int32.max)),
        ])
        #expect(second.allSatisfy { if case .load = $0 { false } else { true } })
        #expect(first.messages(to: a).isEmpty && second.messages(to: b).isEmpty)
        #expect(harness.hub.documentCounts.loading == 1)

        let answered = harness.completeLoads()
        #expect(answered.messages(to: a).last?["result"]?["text"] == "shared")
        #expect(answered.messages(to: b).last?["result"]?["text"] == "shared")
        #expect(harness.hub.documentCounts == (stored: 1, loaded: 1, loading: 0))
        // Open now: no load.
        let (c, _) = harness.connect(name: "carol")
        let third = harness.send(c, "openDocument", ["document": .string(id)])
        #expect(third.allSatisfy { if case .load = $0 { false } else { true } })
        #expect(third.messages(to: c).last?["result"]?["text"] == "shared")
    }

    @Test func aDocumentNobodyHasOpenIsNotHeld() {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a, text: "x")
        #expect(harness.hub.documentCounts.loaded == 0)  // created, never opened
        _ = harness.openDocument(a, id)
        _ = harness.openDocument(b, id)
        #expect(harness.request(a, "closeDocument", ["document": .string(id)])["result"] == [:])
        #expect(harness.hub.documentCounts.loaded == 1)
        harness.run(.closed(b, abnormal: true))
        #expect(harness.hub.documentCounts == (stored: 1, loaded: 0, loading: 0))
        // Opening again reads it back, with nothing lost.
        #expect(harness.openDocument(a, id)["result"]?["text"] == "x")
    }

    @Test func anOpenWhoseSceneEndsIsDroppedAndTheLoadedDocumentIsNotHeld() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a)
        harness.completesLoads = false
        harness.send(a, "openDocument", ["document": .string(id)])
        harness.run(.closed(a, abnormal: true))
        let produced = harness.completeLoads()
        #expect(produced.isEmpty)
        #expect(harness.hub.documentCounts == (stored: 1, loaded: 0, loading: 0))
    }

    @Test func aFailedLoadIsAStorageFailureToRetry() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, text: "safe")
        harness.store.failNextLoad = true
        let reply = harness.openDocument(a, id)
        #expect(reply.errorCode == "storage_failed")
        #expect(reply["error"]?["action"] == "retry")
        #expect(harness.hub.documentCounts.loaded == 0)
        #expect(harness.openDocument(a, id)["result"]?["text"] == "safe")
    }

    @Test func aDocumentWhoseStoredLogDoesNotFitItsTextIsRefusedNotOpenedWrong() throws {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, text: "ab")
        var misfit = TextOperation()
        misfit.retain(5)
        misfit.insert("x")
        try harness.store.apply([.appendOperation(DocumentID(id), StoredOperation(
            revision: 1, operation: misfit, opId: "x:1", author: DocumentAuthor(scene: "s", user: "u", name: "u"),
            createdAt: 0), length: 6)])
        let reply = harness.openDocument(a, id)
        #expect(reply.errorCode == "internal_error")
        #expect(harness.hub.documentCounts.loaded == 0)
    }

    @Test func aDocumentDeletedWhileLoadingFailsTheWaitingOpens() {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a)
        harness.completesLoads = false
        harness.send(b, "openDocument", ["document": .string(id)])
        let deleted = harness.send(a, "deleteDocument", ["document": .string(id)])
        #expect(deleted.messages(to: b).last?.errorCode == "document_not_found")
        #expect(harness.completeLoads().isEmpty)
        #expect(harness.hub.documentCounts == (stored: 0, loaded: 0, loading: 0))
    }

    @Test func reopeningFromARevisionGivesExactlyTheMissingOperations() {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a, text: "ab")
        _ = harness.openDocument(a, id)
        _ = harness.openDocument(b, id)
        _ = harness.edit(a, id, revision: 0, [2, "c"], opId: "a:1")
        _ = harness.edit(a, id, revision: 1, ["0", 3], opId: "a:2")
        _ = harness.edit(a, id, revision: 2, [-1, 3], opId: "a:3")

        harness.run(.closed(b, abnormal: true))
        let (again, _) = harness.connect(name: "bob")
        let result = harness.openDocument(again, id, revision: 1)["result"]
        #expect(result?["catchUp"] == "operations")
        #expect(result?["revision"] == 3)
        #expect(result?["text"] == nil)
        let operations = result?["operations"]?.arrayValue ?? []
        #expect(operations.map { $0["revision"] } == [2, 3])
        #expect(operations.map { $0["operation"] } == [["0", 3], [-1, 3]])
        #expect(operations.map { $0["opId"] } == ["a:2", "a:3"])
        #expect(operations.first?["author"]?["user"] == "alice")
        #expect(operations.first?["author"]?["name"] == "alice")
        #expect(operations.first?["author"]?["scene"] != nil)

        let upToDate = harness.openDocument(again, id, revision: 3)["result"]
        #expect(upToDate?["catchUp"] == "none")
        #expect(upToDate?["operations"] == [])
        #expect(upToDate?["text"] == nil)
    }

    @Test func reopeningFromBeyondTheKeptLogGivesTheWholeText() {
        var settings = Settings()
        settings.snapshotEvery = 2
        settings.operationLogRetention = 1
        settings.operationLogRetentionMs = 0  // by count only
        var harness = HubHarness(settings: settings)
        let (a, _) = harness.connect()
        let id = harness.createDocument(a)
        _ = harness.openDocument(a, id)
        for revision in 0..<4 {
            #expect(harness.edit(a, id, revision: Int64(revision), revision == 0 ? ["x"] : [.int(Int64(revision)), "x"],
                                 opId: "a:\(revision)")["ok"] == true)
        }
        // Snapshot at 4, log kept from 4 - 1 + 1 = 4: revisions 3 and later can catch up.
        let (b, _) = harness.connect(name: "bob")
        let old = harness.openDocument(b, id, revision: 2)["result"]
        #expect(old?["catchUp"] == "snapshot")
        #expect(old?["text"] == "xxxx")
        #expect(old?["operations"] == nil)
        let recent = harness.openDocument(b, id, revision: 3)["result"]
        #expect(recent?["catchUp"] == "operations")
        #expect(recent?["operations"]?.arrayValue?.count == 1)
    }

    /// Thousands of operations cost the server's thread more to encode than the text: a window
    /// further behind than `maxCatchUpOperations` gets the text.
    @Test func aWindowTooFarBehindGetsTheTextEvenWhenTheLogReaches() {
        var settings = Settings()
        settings.maxCatchUpOperations = 2
        var harness = HubHarness(settings: settings)
        let (a, _) = harness.connect()
        let id = harness.createDocument(a)
        _ = harness.openDocument(a, id)
        for revision in 0..<4 {
            #expect(harness.edit(a, id, revision: Int64(revision), revision == 0 ? ["x"] : [.int(Int64(revision)), "x"],
                                 opId: "a:\(revision)")["ok"] == true)
        }
        let (b, _) = harness.connect(name: "bob")
        #expect(harness.openDocument(b, id, revision: 1)["result"]?["catchUp"] == "snapshot")
        let near = harness.openDocument(b, id, revision: 2)["result"]
        #expect(near?["catchUp"] == "operations")
        #expect(near?["operations"]?.arrayValue?.count == 2)
    }

    @Test func aRevisionFromTheFutureIsRefusedLoadedOrNot() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a)
        harness.completesLoads = false
        let unloaded = harness.send(a, "openDocument", ["document": .string(id), "revision": 1])
        #expect(unloaded.messages(to: a).last?.errorCode == "revision_in_future")
        #expect(unloaded.allSatisfy { if case .load = $0 { false } else { true } })
        harness.completesLoads = true
        _ = harness.openDocument(a, id)
        let loaded = harness.openDocument(a, id, revision: 5)
        #expect(loaded.errorCode == "revision_in_future")
        #expect(loaded["error"]?["field"] == "revision")
        #expect(harness.openDocument(a, id, revision: -1).errorCode == "invalid_field")
    }

    @Test func closingADocumentThatIsNotOpenIsAnError() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a)
        #expect(harness.request(a, "closeDocument", ["document": .string(id)]).errorCode == "document_not_open")
        _ = harness.openDocument(a, id)
        #expect(harness.request(a, "closeDocument", ["document": .string(id)])["ok"] == true)
        #expect(harness.request(a, "closeDocument", ["document": .string(id)]).errorCode == "document_not_open")
    }

    @Test func aClosedSceneGetsNoMoreOperations() {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a)
        _ = harness.openDocument(a, id)
        _ = harness.openDocument(b, id)
        _ = harness.request(b, "closeDocument", ["document": .string(id)])
        let produced = harness.send(a, "edit", ["document": .string(id), "revision": 0, "operation": ["hi"], "opId": "a:1"])
        #expect(produced.messages(to: b).isEmpty)
    }

    @Test func everythingSurvivesARestartIncludingWhichOperationsWereApplied() throws {
        var settings = Settings()
        settings.snapshotEvery = 3
        var harness = HubHarness(settings: settings)
        let (a, created) = harness.connect()
        let id = harness.createDocument(a, title: "Durable", text: "e\u{301}")
        _ = harness.openDocument(a, id)
        for step in 0..<5 {
            #expect(harness.edit(a, id, revision: Int64(step), [.int(Int64(2 + step)), "😀"], opId: "a:\(step)")["ok"] == true)
        }

        var restarted = try harness.restarted()
        #expect(restarted.hub.documentCounts == (stored: 1, loaded: 0, loading: 0))
        let (again, _) = restarted.connect(["session": HubHarness.credentials(created)])
        let listed = restarted.request(again, "observeDocuments")["result"]?["documents"]?.arrayValue?.first
        #expect(listed?["title"] == "Durable")
        #expect(listed?["revision"] == 5)
        #expect(listed?["length"] == 7)
        let opened = restarted.openDocument(again, id, revision: 1)["result"]
        #expect(opened?["operations"]?.arrayValue?.map { $0["opId"] } == ["a:1", "a:2", "a:3", "a:4"])
        #expect(restarted.openDocument(again, id)["result"]?["text"]?.stringValue?.unicodeScalars.elementsEqual(
            "e\u{301}😀😀😀😀😀".unicodeScalars) == true)
        // A resend of an operation applied before the restart is recognised.
        let resend = restarted.edit(again, id, revision: 1, [3, "😀"], opId: "a:1")
        #expect(resend["result"] == ["revision": 2, "opId": "a:1", "duplicate": true])
        #expect(restarted.openDocument(again, id)["result"]?["revision"] == 5)
    }

    @Test func aSessionShowingADocumentKeepsItInItsRestorationActivity() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, title: "Plan", text: String(repeating: "ab", count: 100))
        _ = harness.request(a, "listSessions", ["watch": true])
        let opened = harness.send(a, "openDocument", ["document": .string(id)])
        // The session is saved before the reply.
        let saved = opened.persisted.compactMap { if case .putSession(let s) = $0 { s } else { nil } }.last
        #expect(saved?.restoration?.activity.targetContentIdentifier == id)
        #expect(saved?.restoration?.activity.activityType == "panes.document")
        #expect(saved?.title == "Plan")
        #expect(saved?.snapshot == ["text": .string(String(repeating: "ab", count: 60))])
        let switcher = opened.events(to: a, named: "sessionsChanged").last?["sessions"]?.arrayValue?.first
        #expect(switcher?["targetContentIdentifier"] == .string(id))
        #expect(switcher?["title"] == "Plan")

        // "Open in new window" for the same document brings this window forward.
        let (other, _) = harness.connect()
        let activation = harness.request(other, "requestActivation", [
            "activity": ["activityType": "panes.document", "targetContentIdentifier": .string(id)],
        ])
        #expect(activation["result"]?["action"] == "activated")

        // Opening it again changes nothing stored.
        let again = harness.send(a, "openDocument", ["document": .string(id)])
        #expect(again.persisted.isEmpty)
    }

    @Test func openingADocumentKeepsTheWindowsOwnActivityUserInfo() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, title: "Plan", text: "hello")
        _ = harness.request(a, "updateActivity", ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_other",
                                                               "userInfo": ["note": "window note"]]])
        let opened = harness.send(a, "openDocument", ["document": .string(id)])
        let saved = opened.persisted.compactMap { if case .putSession(let s) = $0 { s } else { nil } }.last
        #expect(saved?.restoration?.activity.targetContentIdentifier == id)
        #expect(saved?.restoration?.activity.userInfo == ["note": "window note"])
    }

    @Test func aDedicatedWindowKeepsItsOwnActivityType() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a)
        let activation = harness.request(a, "requestActivation", [
            "activity": ["activityType": "panes.document.dedicated", "targetContentIdentifier": "doc_other"],
        ])
        let ticket = activation["result"]?["ticket"] ?? .null
        let (window, _) = harness.connect(["ticket": ticket])
        _ = harness.request(window, "updateActivity", ["activity": ["activityType": "panes.document.dedicated",
                                                                     "targetContentIdentifier": "doc_other"]])
        let opened = harness.send(window, "openDocument", ["document": .string(id)])
        let saved = opened.persisted.compactMap { if case .putSession(let s) = $0 { s } else { nil } }.last
        #expect(saved?.configuration == "document")
        #expect(saved?.restoration?.activity.activityType == "panes.document.dedicated")
        #expect(saved?.restoration?.activity.targetContentIdentifier == id)
    }

    @Test func theSwitcherFollowsRenamesAndEdits() {
        var settings = Settings()
        settings.documentListIntervalMs = 0
        var harness = HubHarness(settings: settings)
        let (a, _) = harness.connect()
        let (watcher, _) = harness.connect()
        let id = harness.createDocument(a, title: "Old", text: "first")
        _ = harness.openDocument(a, id)
        harness.run(.closed(a, abnormal: false))  // the session stays, showing the document
        _ = harness.request(watcher, "listSessions", ["watch": true])
        let (editor, _) = harness.connect(name: "bob")
        _ = harness.openDocument(editor, id)

        let renamed = harness.send(editor, "renameDocument", ["document": .string(id), "title": "New"])
        let entry = renamed.events(to: watcher, named: "sessionsChanged").last?["sessions"]?.arrayValue?
            .first { $0["targetContentIdentifier"] == .string(id) }
        #expect(entry?["title"] == "New")
        #expect(entry?["state"] == "disconnected")

        _ = harness.edit(editor, id, revision: 0, [-5, "second"], opId: "b:1")
        let ticked = harness.run(.tick)
        let refreshed = ticked.events(to: watcher, named: "sessionsChanged").last?["sessions"]?.arrayValue?
            .first { $0["targetContentIdentifier"] == .string(id) && $0["state"] == "disconnected" }
        #expect(refreshed?["snapshot"] == ["text": "second"])
        #expect(ticked.persisted.contains { if case .putSession(let s) = $0 { s.snapshot == ["text": "second"] } else { false } })
    }
}
