@_spi(Testing) import PanesCore
import PanesCoreTestSupport
import Testing

/// Summaries count a person's windows on every node: each node tells the others its people in
/// a document (`NodeSignal.Kind.people`), and merges theirs with its own.
@Suite struct ClusterPeopleTests {
    @Test func aPersonsWindowsOnTwoNodesAreCountedTogetherAndActiveAsWell() throws {
        let store = MemoryStore()
        var a = HubHarness(store: store, node: NodeID("a"), ids: .sequential(from: 0))
        var b = HubHarness(stored: try store.loadState(), store: store, node: NodeID("b"), ids: .sequential(from: 1 << 40))
        TwoNodes.meet(&a, &b)
        let (alice1, _) = a.connect(name: "alice")
        let id = a.createDocument(alice1, text: "x")
        _ = TwoNodes.deliver(a.effects, to: &b)
        let (alice2, _) = b.connect(name: "alice")
        let (alice3, _) = b.connect(name: "alice")
        let (bob, _) = b.connect(name: "bob")
        _ = a.request(alice1, "lifecycle", ["visible": true, "focused": true])
        _ = b.request(alice2, "lifecycle", ["visible": true, "focused": false])
        _ = b.request(bob, "observeDocuments")
        let (observer, _) = a.connect(name: "carol")
        _ = a.request(observer, "observeDocuments")

        _ = a.openDocument(alice1, id)
        var told = TwoNodes.deliver(a.effects, to: &b)
        #expect(told.events(to: bob, named: "documentsChanged").last?["document"]?["people"]
                    == [["user": "alice", "name": "alice", "windows": 1, "active": 1]])
        _ = b.openDocument(alice2, id)
        _ = b.openDocument(alice3, id)
        _ = b.openDocument(bob, id)
        told = TwoNodes.deliver(b.effects, to: &a)
        let summary = told.events(to: observer, named: "documentsChanged").last?["document"]
        #expect(summary?["people"] == [["user": "alice", "name": "alice", "windows": 3, "active": 1],
                                       ["user": "bob", "name": "bob", "windows": 1, "active": 0]])
        #expect(summary?["participantCount"] == 4)
        // The same on b, and in a list read afresh.
        let listed = b.request(bob, "observeDocuments")["result"]?["documents"]?.arrayValue?.first
        #expect(listed?["people"]?.arrayValue?.first == ["user": "alice", "name": "alice", "windows": 3, "active": 1])
        #expect(listed?["participantCount"] == 4)

        // Alice's window on a goes to the background, and one on b closes: both nodes hear it.
        _ = a.send(alice1, "lifecycle", ["visible": false, "focused": false])
        told = TwoNodes.deliver(a.effects, to: &b)
        #expect(told.events(to: bob, named: "documentsChanged").last?["document"]?["people"]?.arrayValue?.first
                    == ["user": "alice", "name": "alice", "windows": 3, "active": 0])
        _ = b.send(alice3, "closeDocument", ["document": .string(id)])
        told = TwoNodes.deliver(b.effects, to: &a)
        #expect(told.events(to: observer, named: "documentsChanged").last?["document"]?["people"]?.arrayValue?.first
                    == ["user": "alice", "name": "alice", "windows": 2, "active": 0])
    }
    /// b's listener was down while alice closed the document on a: b missed a's empty list.
    /// When b asks again it forgets what a told, so alice is no longer counted.
    @Test func peopleAClosedDocumentHadElsewhereAreNotCountedAfterANodeAsksAgain() throws {
        let store = MemoryStore()
        var a = HubHarness(store: store, node: NodeID("a"), ids: .sequential(from: 0))
        var b = HubHarness(stored: try store.loadState(), store: store, node: NodeID("b"), ids: .sequential(from: 1 << 40))
        TwoNodes.meet(&a, &b)
        let (alice, _) = a.connect(name: "alice")
        let id = a.createDocument(alice, text: "x")
        _ = a.openDocument(alice, id)
        TwoNodes.deliver(a.effects, to: &b)
        let (bob, _) = b.connect(name: "bob")
        func count() -> JSONValue? {
            b.request(bob, "observeDocuments")["result"]?["documents"]?.arrayValue?.first?["participantCount"]
        }
        #expect(count() == 1)
        // Not heard on b: alice closes the document on a.
        let closed = a.send(alice, "closeDocument", ["document": .string(id)])
        #expect(closed.contains { if case .signal(let signal) = $0, case .people = signal.kind { true } else { false } })
        let asked = b.run(.notice(.resubscribed))
        #expect(count() == 0, "what a told before is forgotten when b asks again")
        TwoNodes.deliver(TwoNodes.deliver(asked, to: &a), to: &b)
        #expect(count() == 0)
    }

    /// b asked while a's listener was down, so a never answered: when a's listener is back it
    /// tells every node its people again.
    @Test func aNodeWhoseListenerWasDownTellsItsPeopleAgainWhenItIsBack() throws {
        let store = MemoryStore()
        var a = HubHarness(store: store, node: NodeID("a"), ids: .sequential(from: 0))
        var b = HubHarness(stored: try store.loadState(), store: store, node: NodeID("b"), ids: .sequential(from: 1 << 40))
        TwoNodes.meet(&a, &b)
        let (alice, _) = a.connect(name: "alice")
        let id = a.createDocument(alice, text: "x")
        TwoNodes.deliver(a.effects, to: &b)
        let (bob, _) = b.connect(name: "bob")
        func count() -> JSONValue? {
            b.request(bob, "observeDocuments")["result"]?["documents"]?.arrayValue?.first?["participantCount"]
        }
        #expect(count() == 0)
        // Alice opens it, unheard on b; b asks, unheard on a. Then a's listener is back.
        _ = a.openDocument(alice, id)
        _ = b.run(.notice(.resubscribed))
        #expect(count() == 0)
        TwoNodes.deliver(a.run(.notice(.resubscribed)), to: &b)
        #expect(count() == 1, "a told its people again when its listener was back")
    }
}
