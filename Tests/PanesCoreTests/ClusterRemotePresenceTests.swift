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

    /// The presence signals in `effects` (one per cursor, or an answer's parts).
    static func presenceSignals(_ effects: [Effect]) -> [NodeSignal] {
        effects.compactMap { effect -> NodeSignal? in
            guard case .signal(let signal) = effect else { return nil }
            switch signal.kind {
            case .presence, .presenceRetold: return signal
            default: return nil
            }
        }
    }

    /// b's listener was down while alice moved her cursor on a: when it is back, b asks, and
    /// a tells b (and only b) the cursor as it is now. b's scene sees it move, once, and never
    /// leave: b kept what it showed until the answer.
    @Test func aNodeThatAsksAgainIsToldTheCursorsItMissed() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        let shared = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 1]])
        #expect(TwoNodes.deliver(shared, to: &nodes.b).events(to: onB, named: "presence").count == 1)
        // Not heard on b.
        _ = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 2, "head": 4]])
        let asked = nodes.b.run(.notice(.resubscribed))
        #expect(asked.events(to: onB, named: "presence").isEmpty, "b's scene saw the cursor leave when b asked")
        let answered = TwoNodes.deliver(asked, to: &nodes.a)
        let told = Self.presenceSignals(answered)
        #expect(told.count == 1 && told.allSatisfy { $0.to == NodeID("b") }, "\(told)")
        let seen = TwoNodes.deliver(answered, to: &nodes.b).events(to: onB, named: "presence")
        #expect(seen.count == 1, "\(seen)")
        #expect(seen.last?["user"] == "alice" && seen.last?["left"] == false)
        #expect(seen.last?["selection"] == ["anchor": 2, "head": 4])
        let (later, _) = nodes.b.connect(name: "carol")
        let opened = nodes.b.openDocument(later, document)["result"]?["presence"]?.arrayValue
        #expect(opened?.first { $0["user"] == "alice" }?["selection"] == ["anchor": 2, "head": 4])
    }

    /// The listener of b came back and nothing moved meanwhile: b's scene sees nothing at all,
    /// neither when b asks nor when a answers (issue 27: it saw every cursor of every other
    /// node leave and come back after each blip of the database connection).
    @Test func aResubscribeShowsNoLeaveOrEnterForCursorsThatDidNotChange() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        let (second, _) = nodes.a.connect(name: "dave")
        #expect(nodes.a.openDocument(second, document)["ok"] == true)
        for (connection, at) in [(onA, 1), (second, 3)] {
            let shared = nodes.a.send(connection, "setPresence", ["document": .string(document),
                                                                  "selection": ["anchor": .int(Int64(at)), "head": .int(Int64(at))]])
            TwoNodes.deliver(shared, to: &nodes.b)
        }
        let asked = nodes.b.run(.notice(.resubscribed))
        #expect(asked.events(to: onB, named: "presence").isEmpty, "\(asked.events(to: onB, named: "presence"))")
        #expect(nodes.b.hub.cluster.remotePresence[DocumentID(document)]?.values.allSatisfy(\.stale) == true)
        let answered = TwoNodes.deliver(TwoNodes.deliver(asked, to: &nodes.a), to: &nodes.b)
        #expect(answered.events(to: onB, named: "presence").isEmpty, "\(answered.events(to: onB, named: "presence"))")
        #expect(nodes.b.hub.cluster.remotePresence[DocumentID(document)]?.values.filter { !$0.stale }.count == 2)
        // Nor later.
        nodes.b.clock.advance(Millis(Settings().nodeLeaseMs))
        #expect(nodes.b.run(.tick).events(to: onB, named: "presence").isEmpty)
        let (later, _) = nodes.b.connect(name: "carol")
        #expect(nodes.b.openDocument(later, document)["result"]?["presence"]?.arrayValue?.count == 2)
    }

    /// The document was edited after alice's cursor was told, and she has not moved it since:
    /// a's answer tells it as it was told (at its revision then), so b finds it identical to
    /// what it holds and its scene sees nothing; a scene opening later gets it moved through
    /// the edit, as before the blip. (Made afresh at a's revision now, it differed from what b
    /// held, and b's scene saw one `presence` per idle cursor per blip.)
    @Test func anUnmovedCursorInADocumentEditedSinceShowsNoEventAcrossAResubscribe() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        let shared = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]])
        #expect(TwoNodes.deliver(shared, to: &nodes.b).events(to: onB, named: "presence").count == 1)
        let edit = nodes.b.send(onB, "edit", ["document": .string(document), "revision": 0, "operation": ["XX", 5], "opId": "b1"])
        TwoNodes.deliver(edit, to: &nodes.a)
        #expect(nodes.a.hub.documents.open[DocumentID(document)]?.revision == 1, "a applied b's edit")
        let asked = nodes.b.run(.notice(.resubscribed))
        let answered = TwoNodes.deliver(TwoNodes.deliver(asked, to: &nodes.a), to: &nodes.b)
        let seen = answered.events(to: onB, named: "presence")
        #expect(seen.isEmpty, "\(seen)")
        #expect(nodes.b.hub.cluster.remotePresence[DocumentID(document)]?.values.allSatisfy { !$0.stale } == true)
        let (later, _) = nodes.b.connect(name: "carol")
        let alice = nodes.b.openDocument(later, document)["result"]?["presence"]?.arrayValue?.first { $0["user"] == "alice" }
        #expect(alice?["selection"] == ["anchor": 3, "head": 5], "\(String(describing: alice))")
        #expect(alice?["revision"] == 1)
    }

    /// b's listener was down while alice closed the document on a: b missed her `left`. When b
    /// asks again it keeps showing her cursor until a's answer, which leaves her out: then
    /// b's scene sees her leave, once.
    @Test func theCursorOfSomeoneWhoLeftWhileANodeWasNotListeningDisappearsWhenItAsksAgain() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        let shared = nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]])
        #expect(TwoNodes.deliver(shared, to: &nodes.b).events(to: onB, named: "presence").count == 1)
        // Not heard on b.
        _ = nodes.a.send(onA, "closeDocument", ["document": .string(document)])
        let asked = nodes.b.run(.notice(.resubscribed))
        #expect(asked.events(to: onB, named: "presence").isEmpty)
        let answer = TwoNodes.deliver(asked, to: &nodes.a)
        #expect(Self.presenceSignals(answer).count == 1, "a has no cursor left, and says so: \(Self.presenceSignals(answer))")
        let left = TwoNodes.deliver(answer, to: &nodes.b).events(to: onB, named: "presence")
        #expect(left.count == 1 && left.first?["user"] == "alice" && left.first?["left"] == true, "\(left)")
        #expect(left.first?["selection"] == .null)
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
        let told = Self.presenceSignals(back)
        #expect(told.count == 1 && told.first?.to == nil, "\(told)")
        let seen = TwoNodes.deliver(back, to: &nodes.b).events(to: onB, named: "presence")
        #expect(seen.last?["selection"] == ["anchor": 1, "head": 3])
    }

    /// a's answer waited past `nodeLeaseMs` after b asked (on a's listener reconnecting and on
    /// the store's retry backoffs, 2 s each, where a lease may be 500 ms), and a is alive all
    /// along (its lease never seen ended): b keeps alice's cursor, and a's late answer is taken
    /// as any other, without a leave and an enter. (Dropped at the bound, it left and came back,
    /// the flicker of issue 27.)
    @Test func anAnswerAfterTheBoundFromANodeStillAliveShowsNoLeaveOrEnter() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        TwoNodes.deliver(nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]]),
                         to: &nodes.b)
        let asked = nodes.b.run(.notice(.resubscribed))
        nodes.b.clock.advance(Millis(Settings().nodeLeaseMs) + 4_000)
        let waited = nodes.b.run(.tick).events(to: onB, named: "presence")
        #expect(waited.isEmpty, "alice's cursor left while a was alive: \(waited)")
        let answered = TwoNodes.deliver(TwoNodes.deliver(asked, to: &nodes.a), to: &nodes.b)
        let seen = answered.events(to: onB, named: "presence")
        #expect(seen.isEmpty, "\(seen)")
        #expect(nodes.b.hub.cluster.remotePresence[DocumentID(document)]?.values.map(\.stale) == [false])
    }

    /// a never answers b's question (its listener is down too) while alice closes the
    /// document: b keeps showing her cursor while a lives, and once a's listener is back a
    /// tells every node its cursors again, whole: b's scene sees her leave then.
    @Test func aCursorNoAnswerRefreshedStaysWhileItsNodeLivesAndLeavesWithItsNextWholeAnswer() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        TwoNodes.deliver(nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]]),
                         to: &nodes.b)
        // Neither heard on the other node.
        _ = nodes.b.run(.notice(.resubscribed))
        _ = nodes.a.send(onA, "closeDocument", ["document": .string(document)])
        nodes.b.clock.advance(Millis(Settings().nodeLeaseMs) * 10)
        #expect(nodes.b.run(.tick).events(to: onB, named: "presence").isEmpty)
        let back = nodes.a.run(.notice(.resubscribed))
        let left = TwoNodes.deliver(back, to: &nodes.b).events(to: onB, named: "presence")
        #expect(left.count == 1 && left.first?["user"] == "alice" && left.first?["left"] == true, "\(left)")
        #expect(nodes.b.hub.cluster.remotePresence.isEmpty)
    }

    /// An answer's parts after the first were missed (b's listener dropped again in between,
    /// and b asked again): the last part alone says nothing of what the others held, so b
    /// drops nothing on it.
    @Test func theLastPartOfAnAnswerWhoseFirstWasMissedDropsNothing() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        TwoNodes.deliver(nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]]),
                         to: &nodes.b)
        _ = nodes.b.run(.notice(.resubscribed))
        let last = NodeSignal(from: NodeID("a"), to: NodeID("b"), kind: .presenceRetold(Hub.retold([], part: 1, parts: 2)))
        #expect(nodes.b.run(.notice(.signal(last))).events(to: onB, named: "presence").isEmpty)
        #expect(nodes.b.hub.cluster.remotePresence[DocumentID(document)]?.count == 1)
    }

    /// a's lease ends while b waits for its answer: a's cursors leave at once, stale or not.
    @Test func theCursorsOfANodeWhoseLeaseEndedLeaveAtOnceWhileAnswersAreAwaited() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "hello", nameOnB: "bob")
        TwoNodes.deliver(nodes.a.send(onA, "setPresence", ["document": .string(document), "selection": ["anchor": 1, "head": 3]]),
                         to: &nodes.b)
        _ = nodes.b.run(.notice(.resubscribed))
        let left = nodes.b.run(.notice(.nodesExpired([NodeID("a")]))).events(to: onB, named: "presence")
        #expect(left.count == 1 && left.first?["user"] == "alice" && left.first?["left"] == true, "\(left)")
        #expect(nodes.b.hub.cluster.remotePresence.isEmpty)
    }

    /// A node with many cursors answers in as few signals as stay under the bound a signal
    /// travels inline in (`NodeSignal.maxInlineBytes`), not one per cursor: each part as full
    /// as the next cursor allows, every cursor once, in order, and the asker shows them all.
    @Test func manyCursorsAreToldInAsFewSignalsAsFitTheInlineBound() {
        var nodes = TwoNodes()
        let (document, onA, _) = nodes.documentOpenOnBoth(text: String(repeating: "x", count: 100), nameOnB: "bob")
        let count = 40
        var connections = [onA]
        for index in 1..<count {
            let (connection, _) = nodes.a.connect(name: "user\(index)")
            #expect(nodes.a.openDocument(connection, document)["ok"] == true)
            connections.append(connection)
        }
        for (index, connection) in connections.enumerated() {
            _ = nodes.a.send(connection, "setPresence", ["document": .string(document), "data": ["note": .string(String(repeating: "n", count: 200))],
                                                        "selection": ["anchor": .int(Int64(index)), "head": .int(Int64(index))]])
        }
        let answer = nodes.a.run(.notice(.signal(NodeSignal(from: NodeID("b"), to: nil, kind: .scenesWanted))))
        let signals = Self.presenceSignals(answer)
        let parts = signals.compactMap { signal -> JSONValue? in
            if case .presenceRetold(let json) = signal.kind { json } else { nil }
        }
        let told = parts.flatMap { $0["retold"]?.arrayValue ?? [] }
        #expect(parts.count == signals.count, "every presence went in an answer's part")
        #expect(told.count == count)
        let bytes = told.map(\.encodedSize)
        let bound = NodeSignal.maxInlineBytes
        // Not one per cursor: about as many as the bytes need, ceil(bytes / bound) (5 for these
        // 40), one more at most for the parts' envelopes; each part as full as allowed, below.
        let needed = (bytes.reduce(0, +) + bound - 1) / bound
        #expect(signals.count <= needed + 1 && needed < count / 4, "\(signals.count) signals for \(count) cursors, \(needed) needed")
        var index = 0
        for (number, signal) in signals.enumerated() {
            #expect(signal.to == NodeID("b"))
            #expect(signal.json.encodedSize <= bound, "part \(number) is \(signal.json.encodedSize) bytes")
            #expect(parts[number]["part"] == .int(Int64(number)) && parts[number]["parts"] == .int(Int64(signals.count)))
            index += parts[number]["retold"]?.arrayValue?.count ?? 0
            // As full as allowed: the next cursor would not have fitted.
            if index < count { #expect(signal.json.encodedSize + 1 + bytes[index] > bound) }
        }
        let selections = told.compactMap { $0["selection"]?["anchor"]?.intValue }
        #expect(selections.sorted() == (0..<Int64(count)).map { $0 })
        let (later, _) = nodes.b.connect(name: "carol")
        TwoNodes.deliver(answer, to: &nodes.b)
        #expect(nodes.b.openDocument(later, document)["result"]?["presence"]?.arrayValue?.count == count)
    }

    /// On the wire an answer's part is a `presence` whose value has no `document`. Mixed builds
    /// are not supported (docs/operating.md: stop the older nodes first); this only keeps an
    /// older node that strays in from reading a signal it cannot decode as `resubscribed`, and
    /// asking, and being answered, over and over: it reads a presence and ignores it.
    @Test func anAnswersPartReadsAsAPresenceWithoutDocument() {
        let part = NodeSignal(from: NodeID("a"), to: NodeID("b"), kind: .presenceRetold(Hub.retold([["document": "d", "scene": "s"]], part: 0, parts: 1)))
        #expect(part.json["presence"]?["document"] == nil)
        #expect(part.json["presence"]?["retold"]?.arrayValue?.count == 1)
        #expect(NodeSignal(json: part.json) == part)
        let single = NodeSignal(from: NodeID("a"), to: nil, kind: .presence(["document": "d", "scene": "s"]))
        #expect(NodeSignal(json: single.json) == single)
    }
}
