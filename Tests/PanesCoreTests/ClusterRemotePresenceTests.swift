@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// Presence from other nodes (`Hub+RemotePresence.swift`) that came before this node read its
/// document's record, and presence told again when a node asks again (`scenesWanted`).
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

    /// b's listener was down while alice moved her cursor on a: when it is back, b asks, and
    /// a tells b (and only b) the cursor as it is now.
    @Test func aNodeThatAsksAgainIsToldTheCursorsItMissed() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        // Not heard on b.
        _ = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 2, "head": 4]])
        let asked = nodes.b.run(.notice(.resubscribed))
        let answered = TwoNodes.deliver(asked, to: &nodes.a)
        let told = answered.compactMap { effect -> NodeSignal? in
            if case .signal(let signal) = effect, case .presence = signal.kind { signal } else { nil }
        }
        #expect(told.count == 1 && told.allSatisfy { $0.to == NodeID("b") }, "\(told)")
        let seen = TwoNodes.deliver(answered, to: &nodes.b).events(to: onB, named: "presence")
        #expect(seen.last?["user"] == "alice")
        #expect(seen.last?["selection"] == ["anchor": 2, "head": 4])
        let (later, _) = nodes.b.connect(name: "carol")
        let opened = nodes.b.openDocument(later, document)["result"]?["presence"]?.arrayValue
        #expect(opened?.first { $0["user"] == "alice" }?["selection"] == ["anchor": 2, "head": 4])
    }

    /// b's listener was down while alice closed the document on a: b missed her `left`. When b
    /// asks again it forgets what a told, its scene sees her cursor leave, and a, asked,
    /// does not tell it again.
    @Test func theCursorOfSomeoneWhoLeftWhileANodeWasNotListeningDisappearsWhenItAsksAgain() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        let shared = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]])
        #expect(TwoNodes.deliver(shared, to: &nodes.b).events(to: onB, named: "presence").count == 1)
        // Not heard on b.
        _ = nodes.a.send(onA, "closeDocument", ["document": .string(document)])
        let asked = nodes.b.run(.notice(.resubscribed))
        let left = asked.events(to: onB, named: "presence")
        #expect(left.count == 1 && left.first?["user"] == "alice" && left.first?["left"] == true, "\(left)")
        #expect(left.first?["selection"] == .null)
        let answered = TwoNodes.deliver(TwoNodes.deliver(asked, to: &nodes.a), to: &nodes.b)
        #expect(answered.events(to: onB, named: "presence").isEmpty)
        let (later, _) = nodes.b.connect(name: "carol")
        #expect(nodes.b.openDocument(later, document)["result"]?["presence"]?.arrayValue?.isEmpty == true)
    }

    /// b asked while a's listener was down, so a never answered: when a's listener is back it
    /// tells every node its scenes' presence again.
    @Test func aNodeWhoseListenerWasDownTellsItsCursorsAgainWhenItIsBack() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        // Neither heard on the other node.
        _ = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]])
        _ = nodes.b.run(.notice(.resubscribed))
        let back = nodes.a.run(.notice(.resubscribed))
        let told = back.compactMap { effect -> NodeSignal? in
            if case .signal(let signal) = effect, case .presence = signal.kind { signal } else { nil }
        }
        #expect(told.count == 1 && told.first?.to == nil, "\(told)")
        let seen = TwoNodes.deliver(back, to: &nodes.b).events(to: onB, named: "presence")
        #expect(seen.last?["selection"] == ["anchor": 1, "head": 3])
    }
}
