@testable import PanesCore
import Testing

/// The documents' tables behind `DocumentState`'s API: the indexes by workspace and by scene
/// follow every change, a deletion leaves none of them, loads are asked once however many wait,
/// and announcements keep their interval. The hub's use of it is checked in the Document*Tests.
@Suite struct DocumentStateTests {
    static func record(_ id: String, in workspace: String = "w") -> DocumentRecord {
        DocumentRecord(id: DocumentID(id), workspace: workspace, title: id, createdAt: 0, createdBy: "alice", modifiedAt: 0)
    }

    static func held(_ record: DocumentRecord, text: String = "hello") throws -> OpenDocument {
        try OpenDocument(StoredDocument(record: record, snapshotRevision: 0, snapshotText: text, operations: []))
    }

    static func participant(_ scene: String, joined: Int = 0) -> DocumentParticipant {
        DocumentParticipant(scene: SceneID(scene), connection: ConnectionID(1), user: "alice", name: "Alice", active: false,
                            joined: joined)
    }

    @Test func recordsAreListedByWorkspaceAndLeaveTheListWhenRemoved() {
        var documents = DocumentState(stored: [Self.record("a"), Self.record("b"), Self.record("c", in: "v")])
        #expect(documents.records(in: "w").map(\.id).sorted() == [DocumentID("a"), DocumentID("b")])
        #expect(documents.count(in: "v") == 1)
        _ = documents.remove(DocumentID("c"))
        #expect(documents.count(in: "v") == 0)
        #expect(documents.records[DocumentID("c")] == nil)
        #expect(documents.counts.stored == 2)
    }

    @Test func joiningAndLeavingKeepTheScenesOpenDocuments() throws {
        var documents = DocumentState(stored: [Self.record("a"), Self.record("b")])
        documents.hold(try Self.held(Self.record("a")))
        documents.hold(try Self.held(Self.record("b")))
        documents.join(DocumentID("b"), Self.participant("s1"))
        documents.join(DocumentID("a"), Self.participant("s1"))
        #expect(documents.opened(by: SceneID("s1")) == [DocumentID("a"), DocumentID("b")])
        #expect(documents.open[DocumentID("a")]?.joins == 1)
        let left = documents.leave(DocumentID("a"), scene: SceneID("s1"))
        let again = documents.leave(DocumentID("a"), scene: SceneID("s1"))
        #expect(left?.scene == SceneID("s1"))
        #expect(again == nil)
        #expect(documents.opened(by: SceneID("s1")) == [DocumentID("b")])
        #expect(documents.open[DocumentID("a")]?.participants.isEmpty == true)
    }

    @Test func aRemovedDocumentLeavesEveryIndexAndHandsBackItsWaitingOpens() throws {
        var documents = DocumentState(stored: [Self.record("a")])
        documents.hold(try Self.held(Self.record("a")))
        documents.join(DocumentID("a"), Self.participant("s1"))
        let waiting = PendingOpen(scene: SceneID("s2"), requestID: .int(1), revision: nil)
        let first = documents.waitForLoad(DocumentID("a"), waiting)
        #expect(first)
        documents.modified(DocumentID("a"), preview: "x", now: 0, interval: 0)
        let opens = documents.remove(DocumentID("a"))
        #expect(opens.map(\.scene) == [SceneID("s2")])
        #expect(documents.open[DocumentID("a")] == nil)
        #expect(documents.opened(by: SceneID("s1")).isEmpty)
        #expect(documents.loadEnded(DocumentID("a")) == nil, "no load left waiting")
        let due = documents.dueAnnouncements(now: .max)
        #expect(due.isEmpty)
    }

    @Test func oneLoadIsAskedForHoweverManyWaitAndAnEndedSceneStopsWaiting() {
        var documents = DocumentState(stored: [Self.record("a")])
        let first = documents.waitForLoad(DocumentID("a"), PendingOpen(scene: SceneID("s1"), requestID: .int(1), revision: nil))
        let second = documents.waitForLoad(DocumentID("a"), PendingOpen(scene: SceneID("s2"), requestID: .int(2), revision: nil))
        #expect(first && !second)
        documents.stopWaiting(SceneID("s1"))
        let ended = documents.loadEnded(DocumentID("a"))
        let endedAgain = documents.loadEnded(DocumentID("a"))
        #expect(ended?.map(\.scene) == [SceneID("s2")])
        #expect(endedAgain == nil)
    }

    @Test func changesToAHeldDocumentAreMadeInPlaceAndTheRecordFollowsItsText() throws {
        var documents = DocumentState(stored: [Self.record("a")])
        let unheld = documents.updateOpen(DocumentID("a")) { _ in true }
        #expect(unheld == nil)
        documents.hold(try Self.held(Self.record("a"), text: "hello"))
        documents.join(DocumentID("a"), Self.participant("s1"))
        documents.updateParticipant(SceneID("s1"), in: DocumentID("a")) { $0.active = true }
        #expect(documents.open[DocumentID("a")]?.participants[SceneID("s1")]?.active == true)
        let stranger = documents.updateParticipant(SceneID("s9"), in: DocumentID("a")) { _ in true }
        #expect(stranger == nil)
        documents.recordFollowsText(DocumentID("a"), modifiedAt: 7)
        #expect(documents.records[DocumentID("a")]?.length == 5)
        #expect(documents.records[DocumentID("a")]?.modifiedAt == 7)
        documents.recordFollowsText(DocumentID("a"), modifiedAt: 3)
        #expect(documents.records[DocumentID("a")]?.modifiedAt == 7, "never moved back")
        let evicted = documents.evict(DocumentID("a"))
        let evictedAgain = documents.evict(DocumentID("a"))
        #expect(evicted && !evictedAgain)
    }

    @Test func listObserversArePerWorkspace() {
        var documents = DocumentState()
        documents.observe(SceneID("s1"), in: "w")
        documents.observe(SceneID("s2"), in: "v")
        #expect(documents.observers(in: "w") == [SceneID("s1")])
        documents.unobserve(SceneID("s1"), in: "w")
        #expect(documents.observers(in: "w").isEmpty)
    }

    @Test func aModifiedDocumentIsAnnouncedOncePerIntervalWithItsLatestPreview() {
        var documents = DocumentState(stored: [Self.record("a")])
        documents.modified(DocumentID("a"), preview: "one", now: 100, interval: 50)
        documents.modified(DocumentID("a"), preview: "two", now: 110, interval: 50)
        #expect(documents.nextDeadlines.announcement == 100)
        let due = documents.dueAnnouncements(now: 100)
        #expect(due.map(\.id) == [DocumentID("a")] && due.first?.preview == "two")
        // Changed again at once: held until the interval since the last announcement passed.
        documents.modified(DocumentID("a"), preview: nil, now: 120, interval: 50)
        let early = documents.dueAnnouncements(now: 149)
        #expect(early.isEmpty)
        let later = documents.dueAnnouncements(now: 150)
        #expect(later.map(\.id) == [DocumentID("a")] && later.first?.preview == nil)
    }

    @Test func otherNodesPeopleAreKeptPerNodeAndDropWithTheNode() {
        var documents = DocumentState(stored: [Self.record("a"), Self.record("b")])
        let alice = PersonTally(user: "alice", name: "Alice", windows: 2, active: 1)
        let told = documents.setRemotePeople([alice], of: DocumentID("a"), on: NodeID("n2"))
        let toldAgain = documents.setRemotePeople([alice], of: DocumentID("a"), on: NodeID("n2"))
        let toldOther = documents.setRemotePeople([alice], of: DocumentID("b"), on: NodeID("n3"))
        #expect(told && !toldAgain && toldOther, "unchanged the second time")
        #expect(documents.participants(of: DocumentID("a"), limit: 10).count == 2)
        let dropped = documents.dropRemotePeople(of: [NodeID("n2")])
        #expect(dropped == [DocumentID("a")])
        #expect(documents.participants(of: DocumentID("a"), limit: 10).count == 0)
        #expect(documents.participants(of: DocumentID("b"), limit: 10).count == 2)
    }
}
