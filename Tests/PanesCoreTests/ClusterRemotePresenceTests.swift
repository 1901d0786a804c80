@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// Presence from other nodes (`Hub+RemotePresence.swift`) that came before this node read its
/// document's record.
@Suite struct ClusterRemotePresenceTests {
    /// a makes a document, opens it and shares a cursor; b hears the cursor before it has
    /// read the document's record, and a scene on b opens the document while that read is on
    /// its way. The scene gets the cursor, moved through the edit a made after it.
    @Test func presenceThatCameBeforeTheDocumentsRecordIsShownToASceneThatOpensItLater() {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let document = nodes.a.createDocument(onA, text: "hello")
        _ = nodes.a.openDocument(onA, document)
        let (onB, _) = nodes.b.connect(name: "bob")
        let shared = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]])
        #expect(nodes.a.edit(onA, document, revision: 0, ["XX", 5], opId: "a:1")["ok"] == true)
        // Only the signal reaches b: not the notice of the record (or it came while a load
        // that started before the record was written was in flight).
        nodes.b.completesLoads = false
        TwoNodes.deliver(shared.filter { if case .signal = $0 { true } else { false } }, to: &nodes.b)
        #expect(nodes.b.hub.documents.records[DocumentID(document)] == nil, "b has not read the record yet")
        let asked = nodes.b.send(onB, "openDocument", ["id": 70, "document": .string(document)])
        #expect(asked.messages(to: onB).isEmpty, "the open waits for the record")
        let reply = nodes.b.completeLoads().messages(to: onB).last { $0["re"] == 70 }
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["revision"] == 1)
        let alice = reply?["result"]?["presence"]?.arrayValue?.first { $0["user"] == "alice" }
        #expect(alice?["selection"] == ["anchor": 3, "head": 5], "\(String(describing: reply))")
        #expect(alice?["revision"] == 1)
        #expect(nodes.b.hub.cluster.unreadPresence.isEmpty)
    }

    /// The document was deleted before b read it: the load b asks for finds no record, and the
    /// presence is dropped, not kept for good.
    @Test func presenceForADocumentDeletedBeforeThisNodeReadItIsNotKept() {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let document = nodes.a.createDocument(onA, text: "hello")
        _ = nodes.a.openDocument(onA, document)
        let shared = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 1]])
        #expect(nodes.a.request(onA, "deleteDocument", ["document": .string(document)])["ok"] == true)
        nodes.b.completesLoads = false
        TwoNodes.deliver(shared.filter { if case .signal = $0 { true } else { false } }, to: &nodes.b)
        #expect(nodes.b.hub.cluster.unreadPresence[DocumentID(document)] != nil, "kept until the record is read")
        _ = nodes.b.completeLoads()
        #expect(nodes.b.hub.cluster.unreadPresence.isEmpty, "a deleted document's presence was kept")
        #expect(nodes.b.hub.cluster.remotePresence.isEmpty)
    }

    /// a's lease ends while b reads the record its presence waits for: the presence goes with
    /// a's scenes, and is not taken back if a turns out to have renewed late (its scenes tell
    /// their presence again as they move, as after any expiry).
    @Test func presenceWaitingForItsRecordGoesWithItsNode() {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let document = nodes.a.createDocument(onA, text: "hello")
        _ = nodes.a.openDocument(onA, document)
        let (onB, _) = nodes.b.connect(name: "bob")
        let shared = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 1]])
        nodes.b.completesLoads = false
        TwoNodes.deliver(shared.filter { if case .signal = $0 { true } else { false } }, to: &nodes.b)
        _ = nodes.b.run(.notice(.nodesExpired([NodeID("a")])))
        _ = nodes.b.run(.notice(.nodesExpired([])))
        _ = nodes.b.send(onB, "openDocument", ["id": 71, "document": .string(document)])
        let reply = nodes.b.completeLoads().messages(to: onB).last { $0["re"] == 71 }
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"]?["presence"]?.arrayValue?.isEmpty == true, "\(String(describing: reply))")
        #expect(nodes.b.hub.cluster.remotePresence.isEmpty)
    }
}
