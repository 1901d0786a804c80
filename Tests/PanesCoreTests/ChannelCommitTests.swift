import PanesCore
import PanesCoreTestSupport
import Testing

/// Channel writes (preference domains, document logs) are applied only once committed,
/// grouped per channel while a commit is in flight, and caught up and retried when another
/// writer (another node on the same database) got there first.
@Suite struct ChannelCommitTests {
    static let domain = PreferenceDomain(workspace: "default", user: "alice")

    @Test func nothingIsAppliedOrSaidBeforeTheCommitAndWritesQueuedMeanwhileGoTogether() {
        var harness = HubHarness()
        let (writer, _) = harness.connect()
        let (observer, _) = harness.connect()
        _ = harness.request(observer, "observe", ["domain": "user", "keyPath": "editor"])
        harness.completesCommits = false

        let first = harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 20])
        #expect(first.count == 1, "only the commit: \(first)")
        guard case .commit(let commit)? = first.first else { return }
        #expect(commit.base == 0)
        // Read while the commit is in flight: the committed value, not the pending one.
        let read = harness.send(observer, "observe", ["domain": "user", "keyPath": "editor.fontSize", "options": ["initial"]])
        #expect(read.events(to: observer, named: "preferenceChanged").first?["new"] == 15)
        // Two more writes wait for the first commit.
        #expect(harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 21]).isEmpty)
        #expect(harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 22, "ifVersion": 2]).isEmpty)

        let done = harness.completeCommits()
        let replies = done.messages(to: writer).filter { $0["type"] == "reply" }
        #expect(replies.map { $0["result"]?["version"] } == [1, 2, 3])
        let commits = done.compactMap { effect -> Commit? in if case .commit(let c) = effect { c } else { nil } }
        #expect(commits.count == 1, "the two queued writes went as one commit")
        #expect(commits.first?.base == 1)
        #expect(commits.first?.commands.count == 2)
        let seen = done.events(to: observer, named: "preferenceChanged").map { $0["version"] }
        #expect(seen == [1, 2, 3], "every change announced once, in version order")
    }

    @Test func aConflictCatchesUpWithTheOtherWriterThenRetriesOnTopOfIt() throws {
        var harness = HubHarness()
        let (writer, _) = harness.connect()
        let (observer, _) = harness.connect()
        _ = harness.request(observer, "observe", ["domain": "user", "keyPath": "editor", "options": ["old", "new"]])
        harness.completesCommits = false
        _ = harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 20])
        let stale = harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.showWordCount",
                                                            "value": true, "ifVersion": 0])
        #expect(stale.isEmpty)

        // Another node commits first: version 1 is theirs.
        try harness.store.apply([.putPreference(Self.domain, keyPath: "editor.showWordCount", value: false, version: 1)])
        harness.completesCommits = true
        let done = harness.completeCommits()

        let events = done.events(to: observer, named: "preferenceChanged")
        #expect(events.map { $0["keyPath"] } == ["editor.showWordCount", "editor.fontSize"])
        #expect(events.map { $0["version"] } == [1, 2], "the other node's change first, then ours on top")
        let replies = done.messages(to: writer).filter { $0["type"] == "reply" }
        #expect(replies.count == 2)
        #expect(replies.first?["result"]?["version"] == 2)
        // Checked again after the catch-up: `showWordCount` has a value at version 1 now.
        #expect(replies.last?["error"]?["code"] == "version_conflict")
        #expect(try harness.store.loadPreferences(Self.domain)?.values["editor.fontSize"]?.version == 2)
    }

    @Test func aDocumentEditConflictAppliesTheOtherNodesOperationFirst() throws {
        var harness = HubHarness()
        let (a, _) = harness.connect(name: "alice")
        let (b, _) = harness.connect(name: "bob")
        let id = harness.createDocument(a, text: "abc")
        _ = harness.openDocument(a, id)
        _ = harness.openDocument(b, id)
        harness.completesCommits = false
        #expect(harness.send(a, "edit", ["document": .string(id), "revision": 0, "operation": [3, "!"], "opId": "a1"])
            .messages(to: a).isEmpty, "no reply before the commit")

        // Another node appended revision 1 meanwhile.
        let theirs = StoredOperation(revision: 1, operation: try TextOperation(json: ["X", 3]), opId: "n2:1",
                                     author: DocumentAuthor(scene: "scn_elsewhere", user: "carol", name: "Carol"),
                                     createdAt: 1)
        try harness.store.apply([.appendOperation(DocumentID(id), theirs, length: 4)])
        harness.completesCommits = true
        let done = harness.completeCommits()

        #expect(done.events(to: b, named: "documentOperation").map { $0["revision"] } == [1, 2])
        #expect(done.events(to: a, named: "documentOperation").map { $0["revision"] } == [1])
        #expect(done.messages(to: a).last { $0["type"] == "reply" }?["result"]?["revision"] == 2)
        #expect(harness.text(of: id) == "Xabc!")
    }

    @Test func aCommitTheStoreCannotMakeIsAnsweredWithARetryableErrorAndChangesNothing() {
        var harness = HubHarness()
        let (writer, _) = harness.connect()
        harness.completesCommits = false
        _ = harness.send(writer, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 20])
        let done = harness.completeCommits(.failed("database unreachable"))
        let reply = done.messages(to: writer).last
        #expect(reply?["error"]?["code"] == "storage_failed")
        #expect(reply?["error"]?["action"] == "retry")
        harness.completesCommits = true
        let read = harness.send(writer, "observe", ["domain": "user", "keyPath": "editor.fontSize", "options": ["initial"]])
        #expect(read.events(to: writer, named: "preferenceChanged").first?["new"] == 15)
    }
}
