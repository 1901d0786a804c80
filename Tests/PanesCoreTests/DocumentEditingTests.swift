import PanesCore
import PanesCoreTestSupport
import Testing

/// Editing: ordering, transformation, durability before acknowledgement, resends, and every
/// way an edit can be refused without harming the document.
@Suite struct DocumentEditingTests {
    /// Two scenes with a new document open, its text `text`.
    /// A snapshot command without what it remembers of applied op ids, to compare the rest.
    static func withoutApplied(_ command: StoreCommand) -> StoreCommand {
        guard case .snapshotDocument(let id, let revision, let text, let keepFrom, _) = command else { return command }
        return .snapshotDocument(id, revision: revision, text: text, keepFrom: keepFrom)
    }

    static func twoEditors(_ harness: inout HubHarness, text: String = "") -> (ConnectionID, ConnectionID, String) {
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a, text: text)
        _ = harness.openDocument(a, id)
        _ = harness.openDocument(b, id)
        return (a, b, id)
    }

    @Test func anEditIsPersistedThenAcknowledgedAndSentToTheOthers() {
        var harness = HubHarness()
        let (a, b, id) = Self.twoEditors(&harness, text: "héllo")
        let (c, _) = harness.connect(name: "carol")
        _ = harness.openDocument(c, id)
        harness.completesCommits = false
        let proposed = harness.send(a, "edit", ["document": .string(id), "revision": 0, "operation": [5, " wörld 🌍"],
                                                "opId": "s1:1"])
        // Committed first: nothing is said about the edit until its commit is durable.
        guard case .commit(let commit)? = proposed.first, proposed.count == 1,
              case .appendOperation(let document, let entry, let length)? = commit.commands.first
        else {
            Issue.record("the edit was not committed first: \(proposed)")
            return
        }
        #expect(commit.channel == .document(DocumentID(id)))
        #expect(commit.base == 0)
        let produced = harness.completeCommits()
        #expect(document == DocumentID(id))
        #expect(entry.revision == 1)
        #expect(entry.opId == "s1:1")
        #expect(entry.author.user == "alice")
        #expect(length == 13)

        let reply = produced.messages(to: a).last
        #expect(reply?["result"] == ["revision": 1, "opId": "s1:1"])
        #expect(produced.events(to: a, named: "documentOperation").isEmpty)
        // One broadcast for both others, encoded once.
        #expect(produced.contains { if case .broadcast(_, let to) = $0 { Set(to) == [b, c] } else { false } })
        let event = produced.events(to: b, named: "documentOperation").first
        #expect(event?["document"] == .string(id))
        #expect(event?["revision"] == 1)
        #expect(event?["operation"] == [5, " wörld 🌍"])
        #expect(event?["opId"] == "s1:1")
        #expect(event?["author"]?["user"] == "alice")
        #expect(harness.text(of: id) == "héllo wörld 🌍")
    }

    @Test func concurrentEditsAreTransformedAndTheIncomingInsertGoesFirst() {
        var harness = HubHarness()
        let (a, b, id) = Self.twoEditors(&harness, text: "abc")
        // Both made on revision 0: alice inserts at 1, bob at 1 too and deletes "c".
        #expect(harness.edit(a, id, revision: 0, [1, "X", 2], opId: "a:1")["result"]?["revision"] == 1)
        let produced = harness.send(b, "edit", ["document": .string(id), "revision": 0, "operation": [1, "Y", 1, -1],
                                                "opId": "b:1"])
        #expect(produced.messages(to: b).last?["result"]?["revision"] == 2)
        // Bob's insert was not applied yet when alice's arrived, so it comes first at the tie.
        #expect(produced.events(to: a, named: "documentOperation").first?["operation"] == [1, "Y", 2, -1])
        #expect(harness.text(of: id) == "aYXb")
    }

    @Test func aDeleteAcrossAnotherScenesInsertKeepsTheInsert() {
        var harness = HubHarness()
        let (a, b, id) = Self.twoEditors(&harness, text: "0123456789")
        _ = harness.edit(a, id, revision: 0, [5, "👩🏽‍💻", 5], opId: "a:1")
        _ = harness.edit(b, id, revision: 0, [2, -6, 2], opId: "b:1")
        #expect(harness.text(of: id) == "01👩🏽‍💻89")
    }

    @Test func aResentOperationIsNotAppliedTwice() {
        var harness = HubHarness()
        let (a, b, id) = Self.twoEditors(&harness, text: "ab")
        #expect(harness.edit(a, id, revision: 0, [1, "x", 1], opId: "sess:7")["result"]?["revision"] == 1)
        _ = harness.edit(b, id, revision: 1, [3, "!"], opId: "other:1")

        // Alice reconnects and resends the same operation with the same id.
        harness.run(.closed(a, abnormal: true))
        let (again, _) = harness.connect(name: "alice")
        _ = harness.openDocument(again, id, revision: 0)
        let produced = harness.send(again, "edit", ["document": .string(id), "revision": 0, "operation": [1, "x", 1],
                                                    "opId": "sess:7"])
        #expect(produced.messages(to: again).last?["result"] == ["revision": 1, "opId": "sess:7", "duplicate": true])
        #expect(produced.persisted.isEmpty)
        #expect(produced.messages(to: b).isEmpty)
        #expect(harness.text(of: id) == "axb!")
    }

    @Test func anOpIdReusedAtOrAfterItsRevisionIsANewOperation() {
        // A reloaded tab counts its op ids from 1 again; it has seen its earlier operation
        // applied (it opened after it), so the same id from it is new work, not a resend.
        var harness = HubHarness()
        let (a, _, id) = Self.twoEditors(&harness, text: "")
        #expect(harness.edit(a, id, revision: 0, ["x"], opId: "tab:1")["result"] == ["revision": 1, "opId": "tab:1"])
        #expect(harness.edit(a, id, revision: 1, [1, "y"], opId: "tab:1")["result"] == ["revision": 2, "opId": "tab:1"])
        // A resend of that second one, from before it, is recognised.
        #expect(harness.edit(a, id, revision: 1, [1, "y"], opId: "tab:1")["result"]?["duplicate"] == true)
        #expect(harness.text(of: id) == "xy")
    }

    @Test func aNoOpStillTakesARevisionSoTheClientsCountAgrees() {
        var harness = HubHarness()
        let (a, b, id) = Self.twoEditors(&harness, text: "abc")
        _ = harness.edit(a, id, revision: 0, [1, -1, 1], opId: "a:1")
        // Bob deletes the same "b": transformed, his operation deletes nothing.
        let produced = harness.send(b, "edit", ["document": .string(id), "revision": 0, "operation": [1, -1, 1],
                                                "opId": "b:1"])
        #expect(produced.messages(to: b).last?["result"]?["revision"] == 2)
        #expect(produced.events(to: a, named: "documentOperation").first?["operation"] == [2])
        #expect(harness.text(of: id) == "ac")
    }

    @Test func compactionSnapshotsEveryNOperationsAndPrunesTheLog() throws {
        var settings = Settings()
        settings.snapshotEvery = 3
        settings.operationLogRetention = 2
        settings.operationLogRetentionMs = 0  // by count only
        var harness = HubHarness(settings: settings)
        let (a, _, id) = Self.twoEditors(&harness)
        var snapshots: [StoreCommand] = []
        for revision in 0..<7 {
            let produced = harness.send(a, "edit", ["document": .string(id), "revision": .int(Int64(revision)),
                                                    "operation": revision == 0 ? ["a"] : [.int(Int64(revision)), "a"],
                                                    "opId": .string("a:\(revision)")])
            snapshots += produced.persisted.filter { if case .snapshotDocument = $0 { true } else { false } }
        }
        #expect(snapshots.map(Self.withoutApplied) == [
            .snapshotDocument(DocumentID(id), revision: 3, text: "aaa", keepFrom: 2),
            .snapshotDocument(DocumentID(id), revision: 6, text: "aaaaaa", keepFrom: 5),
        ])
        // What the log dropped is remembered by op-id stream: "a:3" (revision 4) was the last.
        if case .snapshotDocument(_, _, _, _, let applied)? = snapshots.last {
            #expect(applied.entries["a"]?.counter == 3)
            #expect(applied.entries["a"]?.revision == 4)
        } else {
            Issue.record("no snapshot")
        }
        let stored = try #require(try harness.store.loadDocument(DocumentID(id), retention: 2))
        #expect(stored.snapshotRevision == 6)
        #expect(stored.operations.map(\.revision) == [5, 6, 7])
        // Memory keeps what the store keeps: revision 4 still catches up, 3 does not.
        #expect(harness.edit(a, id, revision: 4, [4, "z"], opId: "a:late")["ok"] == true)
        #expect(harness.edit(a, id, revision: 3, [3, "z"], opId: "a:old").errorCode == "revision_unavailable")
    }

    /// Past the newest `operationLogRetention`, operations stay while younger than
    /// `operationLogRetentionMs`, and only while the kept log is under `operationLogRetentionBytes`:
    /// an outage of a few minutes catches up exactly however many edits others made.
    @Test func compactionKeepsOperationsByAgeBoundedByBytes() throws {
        var settings = Settings()
        settings.snapshotEvery = 3
        settings.operationLogRetention = 2
        settings.operationLogRetentionMs = 60_000
        settings.operationLogRetentionBytes = 1 << 20
        var harness = HubHarness(settings: settings)
        let (a, _, id) = Self.twoEditors(&harness)
        var snapshots: [StoreCommand] = []
        for revision in 0..<7 {
            harness.clock.advance(20_000)
            let produced = harness.send(a, "edit", ["document": .string(id), "revision": .int(Int64(revision)),
                                                    "operation": revision == 0 ? ["a"] : [.int(Int64(revision)), "a"],
                                                    "opId": .string("a:\(revision)")])
            snapshots += produced.persisted.filter { if case .snapshotDocument = $0 { true } else { false } }
        }
        // Seven edits 20 s apart (revision r made at 20·r s): at revision 6 (120 s) the first two
        // are over a minute old and go; the count alone would have kept from 5.
        #expect(snapshots.map(Self.withoutApplied) == [
            .snapshotDocument(DocumentID(id), revision: 3, text: "aaa", keepFrom: 1),
            .snapshotDocument(DocumentID(id), revision: 6, text: "aaaaaa", keepFrom: 3),
        ])
        #expect(harness.edit(a, id, revision: 2, [2, "z"], opId: "a:late")["ok"] == true)
        #expect(harness.edit(a, id, revision: 1, [1, "z"], opId: "a:old").errorCode == "revision_unavailable")
        let stored = try #require(try harness.store.loadDocument(DocumentID(id), retention: Int(Int32.max)))
        #expect(stored.operations.map(\.revision) == Array(3...8))

        // The byte bound: with no room, edits a second apart (all young) are kept by count only.
        var tight = settings
        tight.operationLogRetentionBytes = 1
        var small = HubHarness(settings: tight)
        let (c, _, other) = Self.twoEditors(&small)
        var kept: [Int64] = []
        for revision in 0..<6 {
            small.clock.advance(1_000)
            let produced = small.send(c, "edit", ["document": .string(other), "revision": .int(Int64(revision)),
                                                  "operation": revision == 0 ? ["a"] : [.int(Int64(revision)), "a"],
                                                  "opId": .string("a:\(revision)")])
            for case .snapshotDocument(_, _, _, let keepFrom, _) in produced.persisted { kept.append(keepFrom) }
        }
        #expect(kept == [2, 5])
    }

    /// A window re-opening from beyond the kept log names its unacknowledged op ids; the reply
    /// says which of them the server applied, so it does not send them again.
    @Test func aSnapshotCatchUpSaysWhichPendingEditsWereApplied() throws {
        var settings = Settings()
        settings.snapshotEvery = 2
        settings.operationLogRetention = 2
        settings.operationLogRetentionMs = 0
        var harness = HubHarness(settings: settings)
        let (a, b, id) = Self.twoEditors(&harness)
        #expect(harness.edit(a, id, revision: 0, ["x"], opId: "a:1")["ok"] == true)
        for revision in 1..<4 {
            #expect(harness.edit(b, id, revision: Int64(revision), [.int(Int64(revision)), "y"],
                                 opId: "b:\(revision)")["ok"] == true)
        }
        // The log keeps 3 and 4 (b:2, b:3); a:1 (revision 1) was dropped and is remembered by
        // its stream. a's reply was lost, and it asks from revision 0.
        let reopened = harness.request(a, "openDocument", ["document": .string(id), "revision": 0,
                                                           "pending": ["b:3", "a:1", "a:2", "c:1"]])["result"]
        #expect(reopened?["catchUp"] == "snapshot")
        #expect(reopened?["applied"] == ["b:3", "a:1"])
        // …and after a restart, from the store.
        var restarted = try harness.restarted()
        let (again, _) = restarted.connect(name: "alice")
        let fromStore = restarted.request(again, "openDocument", ["document": .string(id), "revision": 0,
                                                                  "pending": ["a:1", "a:2"]])["result"]
        #expect(fromStore?["applied"] == ["a:1"])
        let bad = harness.request(a, "openDocument", ["document": .string(id), "pending": ["a:1"]])
        #expect(bad["error"]?["field"] == "pending")
        let tooMany = harness.request(a, "openDocument", ["document": .string(id), "revision": 0,
                                                          "pending": .array((0..<17).map { .string("a:\($0)") })])
        #expect(tooMany["error"]?["field"] == "pending")
    }

    /// A few large operations do not wait for `snapshotEvery`: once the operations since the
    /// last snapshot add up to `snapshotEveryBytes` (their wire size), the text is snapshotted.
    @Test func compactionAlsoSnapshotsOnceTheOperationsAddUpToSnapshotEveryBytes() throws {
        var settings = Settings()
        settings.snapshotEvery = 1_000
        settings.snapshotEveryBytes = 2_048
        var harness = HubHarness(settings: settings)
        let (a, _, id) = Self.twoEditors(&harness)
        let piece = String(repeating: "ü", count: 500)  // 1,000 bytes of UTF-8
        var snapshots: [Int64] = []
        for revision in 0..<5 {
            let operation: JSONValue = revision == 0 ? [.string(piece)] : [.int(Int64(revision * 500)), .string(piece)]
            let produced = harness.send(a, "edit", ["document": .string(id), "revision": .int(Int64(revision)),
                                                    "operation": operation, "opId": .string("a:\(revision)")])
            for case .snapshotDocument(_, let at, let text, _, _) in produced.persisted {
                snapshots.append(at)
                #expect(text.scalarCount == Int(at) * 500)
            }
        }
        // Three operations pass 2 KiB (1,004 + 1,008 + 1,009 bytes); the next two, 2,018, do not.
        #expect(snapshots == [3])
        #expect(try harness.store.loadDocument(DocumentID(id), retention: 0)?.snapshotRevision == 3)
    }

    // MARK: Refusals

    @Test func editingAnUnopenedDocumentIsRefused() {
        var harness = HubHarness()
        let (a, _) = harness.connect()
        let id = harness.createDocument(a, text: "x")
        let reply = harness.edit(a, id, revision: 0, [1, "y"], opId: "a:1")
        #expect(reply.errorCode == "document_not_open")
        #expect(reply["error"]?["action"] == "refresh")
        #expect(harness.text(of: id) == "x")
    }

    @Test func editingADeletedDocumentIsNotFound() throws {
        var harness = HubHarness()
        let (a, b, id) = Self.twoEditors(&harness, text: "x")
        _ = harness.request(b, "deleteDocument", ["document": .string(id)])
        #expect(harness.edit(a, id, revision: 0, [1, "y"], opId: "a:1").errorCode == "document_not_found")
        #expect(harness.edit(a, "doc_never", revision: 0, [1, "y"], opId: "a:2").errorCode == "document_not_found")
        #expect(try harness.store.loadDocument(DocumentID(id), retention: 10) == nil)
    }

    @Test func anOperationThatDoesNotSpanTheDocumentIsRefused() {
        var harness = HubHarness()
        let (a, b, id) = Self.twoEditors(&harness, text: "abc")
        let short = harness.send(a, "edit", ["document": .string(id), "revision": 0, "operation": [2, "x"], "opId": "a:1"])
        #expect(short.messages(to: a).last?.errorCode == "invalid_operation")
        #expect(short.messages(to: a).last?["error"]?["field"] == "operation")
        #expect(short.persisted.isEmpty && short.messages(to: b).isEmpty)
        #expect(harness.edit(a, id, revision: 0, [4, "x"], opId: "a:2").errorCode == "invalid_operation")
        // At an older revision, the length at that revision counts.
        _ = harness.edit(b, id, revision: 0, [3, "d"], opId: "b:1")
        #expect(harness.edit(a, id, revision: 0, [4, "x"], opId: "a:3").errorCode == "invalid_operation")
        #expect(harness.edit(a, id, revision: 0, [3, "x"], opId: "a:4")["ok"] == true)
        #expect(harness.text(of: id) == "abcxd")
    }

    @Test(arguments: [
        JSONValue.array([0]), .array([""]), .array([1.5]), .array([true]), .string("abc"), .array([.int(1 << 40)]),
    ])
    func malformedOperationsAreRefused(_ operation: JSONValue) {
        var harness = HubHarness()
        let (a, _, id) = Self.twoEditors(&harness, text: "a")
        let reply = harness.edit(a, id, revision: 0, operation, opId: "a:1")
        #expect(reply.errorCode == "invalid_operation")
        #expect(harness.text(of: id) == "a")
    }

    @Test func aRevisionFromTheFutureIsRefused() {
        var harness = HubHarness()
        let (a, _, id) = Self.twoEditors(&harness, text: "a")
        let reply = harness.edit(a, id, revision: 1, [1, "b"], opId: "a:1")
        #expect(reply.errorCode == "revision_in_future")
        #expect(reply["error"]?["field"] == "revision")
        #expect(harness.edit(a, id, revision: -1, [1, "b"], opId: "a:1").errorCode == "invalid_field")
        #expect(harness.text(of: id) == "a")
    }

    @Test func anOperationOverMaxOperationBytesIsRefused() {
        var settings = Settings()
        settings.maxOperationBytes = 64
        var harness = HubHarness(settings: settings)
        let (a, _, id) = Self.twoEditors(&harness)
        let reply = harness.edit(a, id, revision: 0, [.string(String(repeating: "x", count: 100))], opId: "a:1")
        #expect(reply.errorCode == "too_large")
        #expect(reply["error"]?["message"]?.stringValue?.contains("maxOperationBytes") == true)
        #expect(harness.edit(a, id, revision: 0, [.string(String(repeating: "x", count: 40))], opId: "a:2")["ok"] == true)
    }

    @Test func anEditThatWouldMakeTheDocumentTooLongIsRefused() {
        var settings = Settings()
        settings.maxDocumentScalars = 1_024
        var harness = HubHarness(settings: settings)
        let (a, _, id) = Self.twoEditors(&harness, text: String(repeating: "a", count: 1_000))
        let reply = harness.edit(a, id, revision: 0, [1_000, .string(String(repeating: "😀", count: 25))], opId: "a:1")
        #expect(reply.errorCode == "too_large")
        #expect(reply["error"]?["message"]?.stringValue?.contains("maxDocumentScalars") == true)
        #expect(harness.edit(a, id, revision: 0, [1_000, .string(String(repeating: "😀", count: 24))], opId: "a:2")["ok"] == true)
    }

    @Test func viewersMayOpenButNotEdit() {
        let tokens = Authenticator.tokens([
            "t-ed": .init(user: "ed", name: "Ed", workspaces: ["acme": .editor]),
            "t-vic": .init(user: "vic", name: "Vic", workspaces: ["acme": .viewer]),
        ])
        var harness = HubHarness(authenticator: tokens)
        let (editor, _) = harness.connect(["auth": ["token": "t-ed"], "workspace": "acme"])
        let (viewer, _) = harness.connect(["auth": ["token": "t-vic"], "workspace": "acme"])
        let id = harness.createDocument(editor, text: "read me")
        #expect(harness.openDocument(viewer, id)["result"]?["text"] == "read me")
        let reply = harness.edit(viewer, id, revision: 0, [7, "!"], opId: "v:1")
        #expect(reply.errorCode == "forbidden")
        #expect(harness.request(viewer, "setPresence", ["document": .string(id), "selection": ["anchor": 1, "head": 2]])["ok"] == true)
        // The viewer still receives everyone else's edits.
        _ = harness.openDocument(editor, id)
        let produced = harness.send(editor, "edit", ["document": .string(id), "revision": 0, "operation": [7, "?"], "opId": "e:1"])
        #expect(produced.events(to: viewer, named: "documentOperation").count == 1)
        #expect(harness.text(of: id) == "read me?")
    }

    @Test func editsOverTheRateLimitAreRefusedAndNothingIsApplied() {
        var settings = Settings()
        settings.rateLimitPerSecond = 1
        settings.rateLimitBurst = 6
        var harness = HubHarness(settings: settings)
        let (a, _, id) = Self.twoEditors(&harness)
        // connect, createDocument and openDocument used three of the burst.
        var acknowledged = 0
        var limited: JSONValue?
        for step in 0..<5 {
            let reply = harness.edit(a, id, revision: Int64(acknowledged),
                                     acknowledged == 0 ? ["x"] : [.int(Int64(acknowledged)), "x"], opId: "a:\(step)")
            if reply["ok"] == true { acknowledged += 1 } else { limited = reply }
        }
        #expect(acknowledged == 3)
        #expect(limited?.errorCode == "rate_limited")
        #expect(limited?["error"]?["retryAfterMs"] != nil)
        #expect(harness.text(of: id) == "xxx")
    }

    @Test func requestFieldsAreChecked() {
        var harness = HubHarness()
        let (a, _, id) = Self.twoEditors(&harness, text: "a")
        #expect(harness.request(a, "edit", ["document": .string(id), "operation": [1], "opId": "x"]).errorCode == "missing_field")
        #expect(harness.request(a, "edit", ["document": .string(id), "revision": 0, "opId": "x"]).errorCode == "missing_field")
        #expect(harness.request(a, "edit", ["document": .string(id), "revision": 0, "operation": [1]]).errorCode == "missing_field")
        #expect(harness.request(a, "edit", ["document": .string(id), "revision": 0, "operation": [1], "opId": ""])
            .errorCode == "invalid_field")
        #expect(harness.request(a, "edit", ["document": .string(id), "revision": 0, "operation": [1],
                                            "opId": .string(String(repeating: "x", count: 129))]).errorCode == "invalid_field")
        #expect(harness.request(a, "edit", ["document": .string(id), "revision": "0", "operation": [1], "opId": "x"])
            .errorCode == "invalid_field")
    }
}
