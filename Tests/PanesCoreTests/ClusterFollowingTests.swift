@_spi(Testing) @testable import PanesCore
import PanesCoreTestSupport
import Testing

/// Two nodes: two hubs over one memory store, which implements the shared-store side, with
/// the notices a listener would deliver handed over by the test. Every test here would fail
/// if a node kept only what it wrote itself.
struct TwoNodes {
    var a: HubHarness
    var b: HubHarness

    init(settings: Settings = Settings()) {
        let store = MemoryStore()
        a = HubHarness(settings: settings, store: store, node: NodeID("a"), ids: .sequential(from: 0))
        b = HubHarness(settings: settings, stored: try! store.loadState(), store: store, node: NodeID("b"),
                       ids: .sequential(from: 1 << 40))
        Self.meet(&a, &b)
    }

    /// Each node's listener read the other alive once it listened (`nodesAlive`), as in a
    /// cluster whose nodes both run: each tells the other its lists.
    static func meet(_ a: inout HubHarness, _ b: inout HubHarness) {
        let both = [a.hub.node, b.hub.node].compactMap { $0 }
        _ = a.run(.notice(.nodesAlive(both, readBegan: 0)))
        _ = b.run(.notice(.nodesAlive(both, readBegan: 0)))
    }

    /// The notices a listener would deliver for what these effects wrote.
    static func notices(for effects: [Effect]) -> [ChangeNotice] {
        var notices: [ChangeNotice] = []
        for effect in effects {
            switch effect {
            case .commit(let commit):
                let moved = commit.commands.filter {
                    switch $0 {
                    case .putPreference, .removePreference, .appendOperation: true
                    default: false
                    }
                }.count
                // A document's log: with its length and last edit, as the shared store says them.
                if case .document(let id) = commit.channel,
                   case .appendOperation(_, let last, let length)? = commit.commands.last(where: {
                       if case .appendOperation = $0 { true } else { false }
                   }) {
                    notices.append(.documentEdited(id, revision: commit.base + Int64(moved), length: length,
                                                   modifiedAt: last.createdAt))
                    continue
                }
                notices.append(.channel(commit.channel, version: commit.base + Int64(moved)))
            case .persist(let commands), .persistQuietly(let commands):
                if !commands.isEmpty { notices.append(.records(cursor: .max)) }
            case .signal(let signal):
                notices.append(.signal(signal))
            default:
                break
            }
        }
        return notices
    }

    /// A document made on `a` with `text`, open in a scene on each node (`b`'s connected as
    /// `nameOnB`).
    mutating func documentOpenOnBoth(text: String, nameOnB: String = "alice")
        -> (document: String, onA: ConnectionID, onB: ConnectionID) {
        let (onA, _) = a.connect()
        let document = a.createDocument(onA, text: text)
        let (onB, _) = b.connect(name: nameOnB)
        Self.deliver(a.effects, to: &b)
        #expect(a.openDocument(onA, document)["ok"] == true)
        #expect(b.openDocument(onB, document)["ok"] == true)
        return (document, onA, onB)
    }

    /// Delivers to `b` what `a`'s effects wrote; returns what `b` produced.
    @discardableResult
    static func deliver(_ effects: [Effect], to node: inout HubHarness) -> [Effect] {
        notices(for: effects).flatMap { node.run(.notice($0)) }
    }
}

@Suite struct ClusterFollowingTests {
    @Test func aPreferenceSetOnOneNodeReachesObserversOnTheOtherInOrderWithTheSameVersions() {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let (onB, _) = nodes.b.connect()
        _ = nodes.a.request(onA, "observe", ["domain": "user", "keyPath": "editor", "options": ["old", "new"]])
        _ = nodes.b.request(onB, "observe", ["domain": "user", "keyPath": "editor", "options": ["old", "new"]])
        var seenOnA: [JSONValue] = []
        var seenOnB: [JSONValue] = []
        for size in [14, 16, 18] {
            let wrote = nodes.a.send(onA, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": .int(Int64(size))])
            seenOnA += wrote.events(to: onA, named: "preferenceChanged")
            seenOnB += TwoNodes.deliver(wrote, to: &nodes.b).events(to: onB, named: "preferenceChanged")
        }
        #expect(seenOnB.count == 3, "every change, once: \(seenOnB)")
        #expect(seenOnB.map { $0["version"] } == seenOnA.map { $0["version"] })
        #expect(seenOnB.map { $0["new"] } == [14, 16, 18])
        #expect(seenOnB.map { $0["old"] } == seenOnA.map { $0["old"] })
        // A notice repeated (or about a change already read) tells nobody twice.
        let again = nodes.b.run(.notice(.channel(.preferences(PreferenceDomain(workspace: "default", user: "alice")), version: 3)))
        #expect(again.events(to: onB, named: "preferenceChanged").isEmpty)
    }

    @Test func changesMissedWhileTheListenerWasDownArriveAfterResubscribing() {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let (onB, _) = nodes.b.connect()
        _ = nodes.b.request(onB, "observe", ["domain": "user", "keyPath": "editor", "options": ["new"]])
        _ = nodes.a.request(onA, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 20])
        _ = nodes.a.request(onA, "setPreference", ["domain": "user", "keyPath": "editor.wrap", "value": true])
        // No notice reached b; then its listener reconnects.
        let caught = nodes.b.run(.notice(.resubscribed)).events(to: onB, named: "preferenceChanged")
        #expect(caught.map { $0["keyPath"] } == ["editor.fontSize", "editor.wrap"])
    }

    @Test func aCatchUpReadThatFailedIsTriedAgainSoTheNodeDoesNotKeepServingWhatItHeld() {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let (onB, _) = nodes.b.connect()
        _ = nodes.b.request(onB, "observe", ["domain": "user", "keyPath": "editor", "options": ["new"]])
        let wrote = nodes.a.send(onA, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 20])
        // b hears of it, but its read fails (the database is unreachable for a moment).
        nodes.b.completesLoads = false
        TwoNodes.deliver(wrote, to: &nodes.b)
        let failed = nodes.b.failLoads("database unreachable")
        #expect(failed.events(to: onB, named: "preferenceChanged").isEmpty)
        // Nothing else will be noticed; the read is tried again once it is due.
        nodes.b.completesLoads = true
        #expect(nodes.b.hub.nextDeadline != nil)
        nodes.b.clock.advance(Backoff.sharedStore.minMs)
        let caught = nodes.b.run(.tick).events(to: onB, named: "preferenceChanged")
        #expect(caught.map { $0["new"] } == [20])
    }

    @Test func compareAndSetIsExactAcrossNodes() {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let (onB, _) = nodes.b.connect()
        _ = nodes.a.request(onA, "observe", ["domain": "user", "keyPath": "count", "options": ["new"]])
        _ = nodes.b.request(onB, "observe", ["domain": "user", "keyPath": "count", "options": ["new"]])
        // Both read version 0 and write on it: exactly one wins.
        nodes.a.completesCommits = false
        _ = nodes.a.send(onA, "setPreference", ["domain": "user", "keyPath": "count", "value": 1, "ifVersion": 0])
        let fromB = nodes.b.request(onB, "setPreference", ["domain": "user", "keyPath": "count", "value": 2, "ifVersion": 0])
        #expect(fromB["ok"] == true)
        let resolved = nodes.a.completeCommits()
        let replyToA = resolved.messages(to: onA).last { $0["type"] == "reply" }
        #expect(replyToA?.errorCode == "version_conflict", "\(String(describing: replyToA))")
        // a caught up on b's write while resolving its conflict: its observer saw it.
        #expect(resolved.events(to: onA, named: "preferenceChanged").map { $0["new"] } == [2])
        // An unconditional write from a after that lands on top, and b hears it.
        nodes.a.completesCommits = true
        let third = nodes.a.send(onA, "setPreference", ["domain": "user", "keyPath": "count", "value": 3])
        #expect(third.messages(to: onA).last { $0["type"] == "reply" }?["result"]?["version"] == 2)
        let onBSaw = TwoNodes.deliver(third, to: &nodes.b).events(to: onB, named: "preferenceChanged")
        #expect(onBSaw.map { $0["new"] } == [3])
        #expect(onBSaw.map { $0["version"] } == [2])
    }

    @Test func concurrentEditsOnTwoNodesConverge() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "abc")
        // Both edit revision 0; a's commit is in flight when b's lands.
        nodes.a.completesCommits = false
        _ = nodes.a.send(onA, "edit", ["document": .string(document), "revision": 0, "operation": [1, "X", 2], "opId": "a1"])
        let fromB = nodes.b.send(onB, "edit", ["document": .string(document), "revision": 0, "operation": [3, "Y"], "opId": "b1"])
        let notify = TwoNodes.deliver(fromB, to: &nodes.a)
        #expect(notify.isEmpty, "a's own commit is in flight: the notice waits for its outcome")
        let resolved = nodes.a.completeCommits()
        #expect(resolved.messages(to: onA).last { $0["type"] == "reply" }?["result"]?["revision"] == 2)
        // a saw b's operation arrive; b hears of a's.
        #expect(resolved.events(to: onA, named: "documentOperation").count == 1)
        let onBSaw = TwoNodes.deliver(resolved, to: &nodes.b).events(to: onB, named: "documentOperation")
        #expect(onBSaw.count == 1)
        #expect(nodes.a.text(of: document) == "aXbcY")
        // Both nodes hold the same text and revision as the store.
        let aHolds = nodes.a.hub.documents.open[DocumentID(document)].map { String($0.text) }
        let bHolds = nodes.b.hub.documents.open[DocumentID(document)].map { String($0.text) }
        #expect(aHolds == "aXbcY")
        #expect(bHolds == "aXbcY")
    }

    @Test func aConflictAnsweredWithTheOtherNodesOperationsRetriesAtOnceWithoutARead() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "abc")
        nodes.a.completesCommits = false
        _ = nodes.a.send(onA, "edit", ["document": .string(document), "revision": 0, "operation": [1, "X", 2], "opId": "a1"])
        _ = nodes.a.send(onA, "edit", ["document": .string(document), "revision": 0, "operation": [2, "Z", 1], "opId": "a2"])
        // b commits two operations first; a's commit then conflicts.
        _ = nodes.b.send(onB, "edit", ["document": .string(document), "revision": 0, "operation": [3, "Y"], "opId": "b1"])
        _ = nodes.b.send(onB, "edit", ["document": .string(document), "revision": 1, "operation": [4, "W"], "opId": "b2"])
        let resolved = nodes.a.completeCommits()
        // The store's answer carried b's operations: no read of a's own, and a retried at once.
        #expect(!resolved.contains { if case .load = $0 { true } else { false } }, "\(resolved)")
        #expect(resolved.events(to: onA, named: "documentOperation").map { $0["opId"] } == ["b1", "b2"])
        #expect(resolved.messages(to: onA).filter { $0["type"] == "reply" }.map { $0["result"]?["revision"] } == [3, 4])
        TwoNodes.deliver(resolved, to: &nodes.b)
        #expect(nodes.a.text(of: document) == "aXbZcYW")
        #expect(nodes.a.hub.documents.open[DocumentID(document)].map { String($0.text) } == "aXbZcYW")
        #expect(nodes.b.hub.documents.open[DocumentID(document)].map { String($0.text) } == "aXbZcYW")
        let metrics = nodes.a.hub.metricsText()
        #expect(metrics.contains("panes_document_commits_total{outcome=\"behind\"} 1"), "\(metrics)")
        #expect(metrics.contains("panes_document_operations_followed_total 2"))
        #expect(metrics.contains("panes_document_catch_up_reads_total{cause=\"conflict\"} 0"))
    }

    /// A document edited on one node and held open on no other: a document list observed on
    /// another node hears of the modification (at its interval) with the revision and length
    /// the store has, as it would for an edit made there.
    @Test func aListOnAnotherNodeHearsOfEditsToADocumentNotOpenThere() {
        var nodes = TwoNodes()
        let (writer, _) = nodes.a.connect()
        let document = nodes.a.createDocument(writer, text: "abc")
        let (watcher, _) = nodes.b.connect(name: "bob")
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        #expect(nodes.b.request(watcher, "observeDocuments")["ok"] == true)
        _ = nodes.a.openDocument(writer, document)
        let before = nodes.a.effects.count
        #expect(nodes.a.edit(writer, document, revision: 0, [3, "de"], opId: "w:1")["ok"] == true)
        #expect(nodes.a.edit(writer, document, revision: 1, [5, "f"], opId: "w:2")["ok"] == true)
        TwoNodes.deliver(Array(nodes.a.effects[before...]), to: &nodes.b)
        #expect(nodes.b.hub.documents.open[DocumentID(document)] == nil, "b does not hold it open")
        let told = nodes.b.run(.tick).events(to: watcher, named: "documentsChanged")
        #expect(told.map { $0["change"] } == ["modified"])
        #expect(told.first?["document"]?["revision"] == 2)
        #expect(told.first?["document"]?["length"] == 6)
        let listed = nodes.b.request(watcher, "observeDocuments")["result"]?["documents"]?.arrayValue ?? []
        #expect(listed.first { $0["id"] == .string(document) }?["length"] == 6)
    }

    /// Found by the two-node convergence simulation: the last scene left while the node read
    /// another node's operations, eviction waited for the read, and nothing evicted afterwards.
    @Test func aDocumentWhoseLastSceneLeftDuringACatchUpIsNotKept() {
        var nodes = TwoNodes()
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "abc")
        let edit = nodes.a.send(onA, "edit", ["document": .string(document), "revision": 0, "operation": [3, "!"], "opId": "a1"])
        nodes.b.completesLoads = false
        TwoNodes.deliver(edit, to: &nodes.b)
        #expect(nodes.b.pendingLoads.count == 1, "b reads a's operation")
        #expect(nodes.b.request(onB, "closeDocument", ["document": .string(document)])["ok"] == true)
        #expect(nodes.b.hub.documentCounts.loaded == 1, "the read is still on its way")
        nodes.b.completeLoads()
        #expect(nodes.b.hub.documentCounts.loaded == 0)
        #expect(nodes.b.hub.commits.documentWriters.isEmpty)
    }

    /// Presence from another node is kept as it came, at that node's revision; a scene that
    /// opens the document later gets it moved through what was applied since, as a local
    /// participant's selection is moved.
    @Test func anotherNodesPresenceIsMovedToTheRevisionAnOpeningSceneGets() {
        var nodes = TwoNodes()
        let (ada, _) = nodes.a.connect(name: "ada")
        let (bob, _) = nodes.a.connect(name: "bob")
        let document = nodes.a.createDocument(ada, text: "hello world")
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        #expect(nodes.a.openDocument(ada, document)["ok"] == true)
        #expect(nodes.a.openDocument(bob, document)["ok"] == true)
        let shared = nodes.a.send(ada, "setPresence", ["document": .string(document), "revision": 0,
                                                        "selection": ["anchor": 6, "head": 11]])
        TwoNodes.deliver(shared, to: &nodes.b)
        let edit = nodes.a.send(bob, "edit", ["document": .string(document), "revision": 0, "operation": ["XXXX", 11], "opId": "b1"])
        TwoNodes.deliver(edit, to: &nodes.b)
        let (carol, _) = nodes.b.connect(name: "carol")
        let opened = nodes.b.openDocument(carol, document)["result"] ?? .null
        #expect(opened["revision"] == 1)
        let adas = opened["presence"]?.arrayValue?.first { $0["user"] == "ada" }
        #expect(adas?["selection"] == ["anchor": 10, "head": 15], "\(String(describing: adas))")
        #expect(adas?["revision"] == 1)
    }

    @Test func sessionsAndDocumentsMadeOnOneNodeAreListedOnTheOther() {
        var nodes = TwoNodes()
        let (watcher, _) = nodes.b.connect()
        _ = nodes.b.request(watcher, "listSessions", ["watch": true])
        _ = nodes.b.request(watcher, "observeDocuments")
        let (window, connected) = nodes.a.connect()
        let document = nodes.a.createDocument(window, title: "Minutes")
        let told = TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let listed = told.events(to: watcher, named: "sessionsChanged").last?["sessions"]?.arrayValue ?? []
        #expect(listed.contains { $0["persistentIdentifier"] == connected["session"]?["persistentIdentifier"] })
        #expect(told.events(to: watcher, named: "documentsChanged").contains { $0["document"]?["id"] == .string(document) })

        // Discarded on b: the live window on a is told and closed.
        let id = connected["session"]?["persistentIdentifier"] ?? .null
        let discarded = nodes.b.request(watcher, "requestDestruction", ["session": id])
        #expect(discarded["ok"] == true, "\(discarded)")
        let onA = TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        #expect(onA.events(to: window, named: "sessionDestroyed").count == 1)
        #expect(onA.closes(window) == [.sessionDestroyed])
    }

    @Test func aDocumentDeletedOnOneNodeLeavesTheOther() {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let document = nodes.a.createDocument(onA)
        let (onB, _) = nodes.b.connect()
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        #expect(nodes.b.openDocument(onB, document)["ok"] == true)
        let deleted = nodes.a.send(onA, "deleteDocument", ["document": .string(document)])
        let onBSaw = TwoNodes.deliver(deleted, to: &nodes.b)
        #expect(onBSaw.events(to: onB, named: "documentDeleted").count == 1)
        #expect(nodes.b.request(onB, "openDocument", ["document": .string(document)]).errorCode == "document_not_found")
    }
}

/// A node reads other nodes' record changes behind its own writes; a read that was taken
/// before one of its own later writes must not undo that write.
@Suite struct ClusterOwnWritesTests {
    @Test func aRecordReadTakenBeforeThisNodesLaterWriteDoesNotUndoIt() throws {
        var node = HubHarness(store: MemoryStore(), node: NodeID("a"))
        let (tab, created) = node.connect()
        let id = SessionID(created["session"]?["persistentIdentifier"]?.stringValue ?? "")
        _ = node.request(tab, "setUserInfo", ["userInfo": ["step": 1]])
        // The node's own write comes back as a notice; the read it asks for is taken now…
        node.completesLoads = false
        node.run(.notice(.records(cursor: .max)))
        let request = try #require(node.pendingLoads.first)
        let stale = node.store.perform(request)
        // …and the scene writes again and leaves before that read's result is in.
        _ = node.request(tab, "setUserInfo", ["userInfo": ["step": 2]])
        node.run(.closed(tab, abnormal: false))
        _ = node.hub.handle(.loaded(stale))
        #expect(node.hub.sessions[id]?.userInfo["step"] == 2, "the stale read undid this node's own write")
    }

    /// Each revision is committed by one batch, so of two nodes editing one document exactly one
    /// snapshots at each multiple of `snapshotEvery` (a snapshot rewrites the whole text).
    @Test func ofTwoNodesEditingOneDocumentExactlyOneTakesEachSnapshot() {
        var settings = Settings()
        settings.snapshotEvery = 3
        var nodes = TwoNodes(settings: settings)
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "")
        for index in 0..<12 {
            let operation: JSONValue = index == 0 ? ["x"] : [.int(Int64(index)), "x"]
            if index % 2 == 0 {
                #expect(nodes.a.edit(onA, document, revision: Int64(index), operation, opId: "a\(index)")["ok"] == true)
                TwoNodes.deliver(nodes.a.committed.suffix(1).map(Effect.commit), to: &nodes.b)
            } else {
                #expect(nodes.b.edit(onB, document, revision: Int64(index), operation, opId: "b\(index)")["ok"] == true)
                TwoNodes.deliver(nodes.b.committed.suffix(1).map(Effect.commit), to: &nodes.a)
            }
        }
        let snapshots = (nodes.a.committed + nodes.b.committed).flatMap(\.commands).compactMap { command -> Int64? in
            if case .snapshotDocument(_, let revision, _, _, _) = command { revision } else { nil }
        }
        #expect(snapshots.sorted() == [3, 6, 9, 12])
        #expect(nodes.a.text(of: document) == String(repeating: "x", count: 12))
    }

    /// Both nodes follow the document and refresh the switcher previews of the windows showing
    /// it; each writes only the sessions it holds, so a node never writes its copy of a session
    /// live on the other (which may be older than the holder's).
    @Test func eachNodeWritesThePreviewsOfTheSessionsItHoldsOnly() {
        var nodes = TwoNodes()
        let (document, onA, _) = nodes.documentOpenOnBoth(text: "abc")
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        let held = { (node: HubHarness) in Set(node.hub.scenes.liveSessions) }
        let onlyA = held(nodes.a), onlyB = held(nodes.b)
        #expect(onlyA.count == 1 && onlyB.count == 1 && onlyA != onlyB)
        // a knows both sessions show the document.
        #expect(Set(nodes.a.hub.sessionIDs(showing: DocumentID(document), in: "default")) == onlyA.union(onlyB))
        let edit = nodes.a.edit(onA, document, revision: 0, [3, "!"], opId: "a1")
        #expect(edit["ok"] == true)
        nodes.a.clock.advance(Millis(Settings().documentListIntervalMs))
        let written = { (effects: [Effect]) in
            Set(effects.persisted.compactMap { if case .putSession(let session) = $0 { session.id } else { nil } })
        }
        #expect(written(nodes.a.run(.tick)) == onlyA)
        TwoNodes.deliver(nodes.a.committed.map(Effect.commit), to: &nodes.b)
        nodes.b.clock.advance(Millis(Settings().documentListIntervalMs))
        #expect(written(nodes.b.run(.tick)) == onlyB)
    }

    @Test func aNodeTooFarBehindTheKeptLogReloadsTheDocumentAndItsScenesComeBack() {
        var settings = Settings()
        settings.snapshotEvery = 1
        settings.operationLogRetention = 2
        settings.operationLogRetentionMs = 0  // by count only
        var nodes = TwoNodes(settings: settings)
        let (document, onA, onB) = nodes.documentOpenOnBoth(text: "")
        // a types ten operations that b never hears of; the kept log keeps two.
        for index in 0..<10 {
            let operation: JSONValue = index == 0 ? ["x"] : [.int(Int64(index)), "x"]
            let reply = nodes.a.edit(onA, document, revision: Int64(index), operation, opId: "a\(index)")
            #expect(reply["ok"] == true)
        }
        // b's own edit conflicts; its catch-up finds the log compacted past it: it reloads the
        // document and tells its scene to reconnect and catch up, instead of retrying for ever.
        let produced = nodes.b.send(onB, "edit", ["document": .string(document), "revision": 0, "operation": ["y"], "opId": "b0"])
        #expect(produced.closes(onB) == [.slowConsumer])
        #expect(nodes.b.hub.documents.open[DocumentID(document)]?.revision == 10)
        // A scene that comes back edits at the current revision, and it commits.
        let (again, _) = nodes.b.connect(name: "bob")
        #expect(nodes.b.openDocument(again, document)["result"]?["revision"] == 10)
        #expect(nodes.b.edit(again, document, revision: 10, [10, "z"], opId: "b1")["result"]?["revision"] == 11)
    }
}
