@testable import PanesCore
import PanesCoreTestSupport
import Testing

/// Request keys (`Hub+RequestKeys.swift`): a state-changing request sent again with its
/// `idempotencyKey` is answered with the first attempt's outcome and applied once, whatever
/// happened to the first reply, on one node or another, before or after a restart.
@Suite struct HubRequestKeysTests {
    /// The commands of every effect that reaches the store, flattened.
    static func records(_ effects: [Effect]) -> [RequestRecord] {
        effects.persisted.compactMap { if case .recordRequest(let record) = $0 { record } else { nil } }
    }

    @Test func aRetryAfterALostReplyIsAnsweredTheSameAndNotAppliedAgain() throws {
        var harness = HubHarness()
        let (first, result) = harness.connect()
        let credentials = HubHarness.credentials(result)
        let set = harness.send(first, "setUserInfo", ["userInfo": ["sidebar": true], "idempotencyKey": "k1"])
        let original = set.messages(to: first).last { $0["type"] == "reply" }
        #expect(Self.records(set).count == 1, "the outcome is recorded")
        // In the same persist as the change: one transaction for both.
        let persist = set.compactMap { if case .persist(let commands) = $0 { commands } else { nil } }
        #expect(persist.count == 1 && persist[0].count == 2, "\(persist)")
        // A later request changes it back; the first reply was lost and the client reconnects.
        #expect(harness.request(first, "setUserInfo", ["userInfo": ["sidebar": false], "idempotencyKey": "k2"])["ok"] == true)
        harness.run(.closed(first, abnormal: true))
        let (second, _) = harness.connect(["session": credentials])
        let retry = harness.send(second, "setUserInfo", ["userInfo": ["sidebar": true], "idempotencyKey": "k1"])
        let reply = retry.messages(to: second).last { $0["type"] == "reply" }
        #expect(reply?["ok"] == true)
        #expect(reply?["result"] == original?["result"], "the same answer as the first attempt")
        #expect(retry.persisted.isEmpty, "nothing applied again")
        let stored = try harness.store.loadState().sessions.first
        #expect(stored?.userInfo == ["sidebar": false], "the later change stands")
    }

    @Test func aRetriedCreateDocumentMakesOneDocument() throws {
        var harness = HubHarness()
        let (connection, _) = harness.connect()
        let first = harness.request(connection, "createDocument", ["title": "Plan", "idempotencyKey": "create-1"])
        let again = harness.request(connection, "createDocument", ["title": "Plan", "idempotencyKey": "create-1"])
        #expect(first["result"]?["document"]?["id"] != nil)
        #expect(again["result"] == first["result"])
        #expect(try harness.store.loadState().documents.count == 1)
    }

    @Test func theSameKeyForAnotherRequestIsRefusedNamingTheField() {
        var harness = HubHarness()
        let (connection, _) = harness.connect()
        #expect(harness.request(connection, "createDocument", ["title": "Plan", "idempotencyKey": "k"])["ok"] == true)
        let reused = harness.request(connection, "createDocument", ["title": "Other", "idempotencyKey": "k"])
        #expect(reused.errorCode == "idempotency_key_reused")
        #expect(reused["error"]?["field"] == "idempotencyKey")
        #expect(reused["error"]?["number"] == 1019)
        let otherType = harness.request(connection, "setUserInfo", ["userInfo": [:], "idempotencyKey": "k"])
        #expect(otherType.errorCode == "idempotency_key_reused")
    }

    @Test func aKeyIsCheckedAsAnEnvelopeField() {
        var harness = HubHarness()
        let (connection, _) = harness.connect()
        for bad: JSONValue in ["", .string(String(repeating: "x", count: 129)), 12, ["k": 1]] {
            let reply = harness.request(connection, "setUserInfo", ["userInfo": [:], "idempotencyKey": bad])
            #expect(reply.errorCode == "invalid_field", "\(bad)")
            #expect(reply["error"]?["field"] == "idempotencyKey")
        }
        #expect(harness.request(connection, "setUserInfo", ["userInfo": [:],
                                                            "idempotencyKey": .string(String(repeating: "x", count: 128))])["ok"] == true)
        // Read-only requests take a key and ignore it.
        #expect(harness.request(connection, "listSessions", ["idempotencyKey": "k"])["ok"] == true)
        #expect(harness.request(connection, "listSessions", ["idempotencyKey": "k"])["ok"] == true)
    }

    @Test func keysAreComparedByTheirBytesAndBelongToOneUser() throws {
        var harness = HubHarness()
        let (ada, _) = harness.connect(name: "ada")
        let (bob, _) = harness.connect(name: "bob")
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let one = harness.request(ada, "createDocument", ["title": "A", "idempotencyKey": .string(composed)])
        let two = harness.request(ada, "createDocument", ["title": "A", "idempotencyKey": .string(decomposed)])
        #expect(one["result"]?["document"]?["id"] != two["result"]?["document"]?["id"], "two keys, two documents")
        let bobs = harness.request(bob, "createDocument", ["title": "A", "idempotencyKey": .string(composed)])
        #expect(bobs["result"]?["document"]?["id"] != one["result"]?["document"]?["id"], "another user's key is another key")
        #expect(try harness.store.loadState().documents.count == 3)
    }

    @Test func aRetryWhileTheFirstIsInFlightWaitsAndGetsTheSameAnswer() throws {
        var harness = HubHarness()
        harness.completesCommits = false
        let (first, _) = harness.connect()
        let write: JSONObject = ["domain": "user", "keyPath": "editor.fontSize", "value": 18, "ifVersion": 0,
                                         "idempotencyKey": "cas-1"]
        let sent = harness.send(first, "setPreference", write)
        #expect(sent.messages(to: first).isEmpty, "waits for its commit")
        #expect(harness.pendingCommits.count == 1)
        // The record rides in the commit itself.
        #expect(Self.records(sent).count == 1)
        let (retrier, _) = harness.connect()
        let waiting = harness.send(retrier, "setPreference", write)
        #expect(waiting.messages(to: retrier).isEmpty, "the retry waits for the first attempt")
        #expect(harness.pendingCommits.count == 1, "and commits nothing of its own")
        let done = harness.completeCommits()
        let firstReply = done.messages(to: first).last { $0["type"] == "reply" }
        let retryReply = done.messages(to: retrier).last { $0["type"] == "reply" }
        #expect(firstReply?["result"] == ["version": 1, "changed": true])
        #expect(retryReply?["result"] == firstReply?["result"], "not `version_conflict` against its own first attempt")
        #expect(try harness.store.loadPreferences(PreferenceDomain(workspace: "default", user: "alice"))?.version == 1)
    }

    @Test func anErrorIsNotKeptSoALaterRetryIsHandledAnew() {
        var harness = HubHarness()
        let (connection, _) = harness.connect()
        let write: JSONObject = ["domain": "user", "keyPath": "editor.fontSize", "value": 18, "ifVersion": 3,
                                         "idempotencyKey": "w"]
        #expect(harness.request(connection, "setPreference", write).errorCode == "version_conflict")
        #expect(harness.request(connection, "setPreference", write).errorCode == "version_conflict",
                "the same request, after an error that applied nothing, is handled again")
        var fixed = write
        fixed["ifVersion"] = 0
        #expect(harness.request(connection, "setPreference", fixed)["ok"] == true, "an error does not take the key")
        #expect(harness.request(connection, "setPreference", write).errorCode == "idempotency_key_reused",
                "a success does")
    }

    @Test func aKeyedOutcomeSurvivesARestart() throws {
        var harness = HubHarness()
        let (connection, result) = harness.connect()
        let created = harness.request(connection, "createDocument", ["title": "Plan", "idempotencyKey": "c"])
        var restarted = try harness.restarted()
        let (again, _) = restarted.connect(["session": HubHarness.credentials(result)])
        let retry = restarted.request(again, "createDocument", ["title": "Plan", "idempotencyKey": "c"])
        #expect(retry["result"] == created["result"])
        #expect(try restarted.store.loadState().documents.count == 1)
    }

    @Test func keysAreForgottenAfterTheRetentionWindowAndBeyondTheCountPerUser() throws {
        var settings = Settings()
        settings.idempotencyRetentionMs = 10_000
        settings.maxIdempotencyKeysPerUser = 3
        var harness = HubHarness(settings: settings)
        let (connection, _) = harness.connect()
        _ = harness.request(connection, "createDocument", ["title": "Old", "idempotencyKey": "old"])
        harness.clock.advance(10_001)
        harness.run(.tick)
        _ = harness.request(connection, "createDocument", ["title": "Old", "idempotencyKey": "old"])
        #expect(try harness.store.loadState().documents.count == 2, "past the window, a new request")
        for index in 1...4 {
            _ = harness.request(connection, "createDocument", ["title": "N", "idempotencyKey": .string("n\(index)")])
        }
        _ = harness.request(connection, "createDocument", ["title": "N", "idempotencyKey": "n1"])
        _ = harness.request(connection, "createDocument", ["title": "N", "idempotencyKey": "n4"])
        #expect(try harness.store.loadState().documents.count == 7, "n1 was forgotten (the oldest of four), n4 was not")
        // The store is pruned on the same terms, every walCheckpointIntervalMs.
        harness.clock.advance(Millis(settings.walCheckpointIntervalMs))
        let tick = harness.run(.tick)
        #expect(tick.persisted.contains { if case .pruneRequestRecords = $0 { true } else { false } })
        #expect(try harness.store.loadState().requestRecords.count == 0, "all older than the window by now")
    }

    @Test func aRetriedConnectAttachesTheSessionTheFirstOneMade() throws {
        var harness = HubHarness()
        let first = harness.open()
        let hello: JSONObject = ["protocol": 1, "auth": ["name": "alice"], "idempotencyKey": "connect-1"]
        let made = harness.request(first, "connect", hello)
        #expect(made["result"]?["created"] == true)
        harness.run(.closed(first, abnormal: true))
        let second = harness.open()
        var retried = hello
        retried["traits"] = ["width": "compact"]
        let again = harness.request(second, "connect", retried)
        #expect(again["ok"] == true, "\(again)")
        let session = made["result"]?["session"]?["persistentIdentifier"]
        #expect(again["result"]?["session"]?["persistentIdentifier"] == session, "the same session, not a second one")
        #expect(again["result"]?["created"] == true, "answered as the first attempt was")
        #expect(try harness.store.loadState().sessions.count == 1)
        // The secret in the retry's reply resumes the session (the first one's was never seen).
        harness.run(.closed(second, abnormal: false))
        let (_, resumed) = harness.connect(["session": HubHarness.credentials(again["result"] ?? .null)])
        #expect(resumed["session"]?["persistentIdentifier"] == session)
    }

    @Test func aDropAndABeginDragRetriedAreAnsweredTheSame() {
        var harness = HubHarness()
        let (connection, _) = harness.connect()
        let item: JSONValue = ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_1"]]
        let begun = harness.request(connection, "beginDrag", ["items": [item], "idempotencyKey": "b"])
        let begunAgain = harness.request(connection, "beginDrag", ["items": [item], "idempotencyKey": "b"])
        #expect(begunAgain["result"] == begun["result"], "one drag")
        let drag = begun["result"]?["drag"] ?? .null
        let dropped = harness.request(connection, "drop", ["drag": drag, "target": "newWindow", "idempotencyKey": "d"])
        #expect(dropped["ok"] == true)
        let droppedAgain = harness.request(connection, "drop", ["drag": drag, "target": "newWindow", "idempotencyKey": "d"])
        #expect(droppedAgain["result"] == dropped["result"], "not `drag_already_dropped`, and no second window")
        let sessions = harness.request(connection, "listSessions")["result"]?["sessions"]?.arrayValue?.count
        #expect(sessions == 2, "the dropper's and the one new window")
    }

    // MARK: Unknown outcomes

    /// A commit whose outcome the store could not tell in time: its write is answered
    /// `outcome_unknown`, a retry waits for the real outcome, and gets the first attempt's answer.
    @Test func anUnknownOutcomeIsAnsweredOutcomeUnknownAndARetryGetsWhatHappened() throws {
        var harness = HubHarness()
        harness.completesCommits = false
        let (writer, _) = harness.connect()
        let (observer, _) = harness.connect()
        _ = harness.request(observer, "observe", ["domain": "user", "keyPath": "editor", "options": ["new"]])
        let write: JSONObject = ["domain": "user", "keyPath": "editor.fontSize", "value": 18,
                                         "idempotencyKey": "u1"]
        harness.send(writer, "setPreference", write)
        let commit = try #require(harness.pendingCommits.first)
        let unknown = harness.run(.committed(commit.id, .unknown("connection lost around COMMIT")))
        let answer = unknown.messages(to: writer).last { $0["type"] == "reply" }
        #expect(answer?.errorCode == "outcome_unknown")
        #expect(answer?["error"]?["action"] == "retry")
        #expect(unknown.events(to: observer, named: "preferenceChanged").isEmpty, "nothing told before it is known")
        // The client resends with its key: it waits for the store to find out.
        let waiting = harness.send(writer, "setPreference", write)
        #expect(waiting.messages(to: writer).isEmpty)
        // It had committed.
        _ = try harness.store.apply([.commit(commit)])
        let known = harness.run(.committed(commit.id, .committed))
        let replies = known.messages(to: writer).filter { $0["type"] == "reply" }
        #expect(replies.count == 1, "the first request is not answered twice: \(replies)")
        #expect(replies.first?["result"] == ["version": 1, "changed": true])
        #expect(known.events(to: observer, named: "preferenceChanged").count == 1, "observers hear it once, now")
    }

    @Test func anUnknownOutcomeThatDidNotCommitLetsTheRetryApply() throws {
        var harness = HubHarness()
        harness.completesCommits = false
        let (writer, _) = harness.connect()
        let write: JSONObject = ["domain": "user", "keyPath": "k", "value": 1, "idempotencyKey": "u2"]
        harness.send(writer, "setPreference", write)
        let commit = try #require(harness.pendingCommits.first)
        harness.run(.committed(commit.id, .unknown("lost")))
        harness.send(writer, "setPreference", write)
        let known = harness.completeCommits(.failed("the transaction did not commit"))
        let retryReply = known.messages(to: writer).last { $0["type"] == "reply" }
        #expect(retryReply?.errorCode == "storage_failed", "nothing was applied: the retry is told so, and may retry")
        harness.completesCommits = true
        let finally = harness.request(writer, "setPreference", write)
        #expect(finally["result"] == ["version": 1, "changed": true])
    }

    @Test func aRetryWaitingOnAnUnknownOutcomeIsToldSoAgainAfterTheBound() throws {
        var settings = Settings()
        settings.commitOutcomeTimeoutMs = 1_000
        var harness = HubHarness(settings: settings)
        harness.completesCommits = false
        let (writer, _) = harness.connect()
        let write: JSONObject = ["domain": "user", "keyPath": "k", "value": 1, "idempotencyKey": "u3"]
        harness.send(writer, "setPreference", write)
        let commit = try #require(harness.pendingCommits.first)
        harness.run(.committed(commit.id, .unknown("lost")))
        #expect(harness.send(writer, "setPreference", write).messages(to: writer).isEmpty)
        harness.clock.advance(1_000)
        let tick = harness.run(.tick)
        #expect(tick.messages(to: writer).last?.errorCode == "outcome_unknown")
    }

    // MARK: Across nodes

    @Test func aRetryThroughAnotherNodeFindsTheFirstNodesRecord() throws {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let created = nodes.a.request(onA, "createDocument", ["title": "Plan", "idempotencyKey": "x1"])
        let (onB, _) = nodes.b.connect()
        let sent = nodes.b.send(onB, "createDocument", ["title": "Plan", "idempotencyKey": "x1"])
        #expect(sent.contains { if case .load(.reserveRequestKeys) = $0 { true } else { false } }, "looked up first")
        let retry = sent.messages(to: onB).last { $0["type"] == "reply" }
        #expect(retry?["result"] == created["result"])
        #expect(try nodes.a.store.loadState().documents.count == 1)
        // A new key on b is looked up too, found nowhere, and applied.
        #expect(nodes.b.request(onB, "createDocument", ["title": "New", "idempotencyKey": "x2"])["ok"] == true)
        #expect(try nodes.a.store.loadState().documents.count == 2)
    }

    /// In a cluster a `cancelDrag` is answered when its commit on the drag's channel is in. Its
    /// window closes (the reply is lost, the scene ends) before that; another window of the
    /// user retries with the key, before or after the commit lands: it is told the cancel's own
    /// answer, on this node and through another, not `drag_already_dropped`.
    @Test(arguments: [false, true])
    func aCancelDragWhoseWindowClosedBeforeItsCommitIsAnsweredOkOnRetry(retryBeforeCommit: Bool) throws {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        let (second, _) = nodes.a.connect()
        let item: JSONValue = ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_1"]]
        let drag = nodes.a.request(source, "beginDrag", ["items": [item]])["result"]?["drag"] ?? .null
        let cancel: JSONObject = ["drag": drag, "idempotencyKey": "cancel-1"]
        nodes.a.completesCommits = false
        nodes.a.send(source, "cancelDrag", cancel)
        #expect(nodes.a.pendingCommits.count == 1, "the cancel waits for its commit")
        #expect(nodes.a.pendingCommits.first?.commands.contains {
            if case .coordination(.recordKeyedRequest) = $0 { true } else { false }
        } == true, "its answer, `{}`, is recorded in the commit that ends the drag")
        nodes.a.run(.closed(source, abnormal: true))
        var retried: [Effect] = []
        if retryBeforeCommit {
            retried = nodes.a.send(second, "cancelDrag", cancel)
            #expect(retried.messages(to: second).isEmpty, "it waits for the first attempt")
        }
        let committed = nodes.a.completeCommits()
        #expect(!committed.persisted.contains { if case .coordination(.recordKeyedRequest) = $0 { true } else { false } },
                "recorded once, in the commit, though its window is gone")
        nodes.a.completesCommits = true
        if !retryBeforeCommit { retried = nodes.a.send(second, "cancelDrag", cancel) }
        let reply = (committed + retried).messages(to: second).last { $0["type"] == "reply" }
        #expect(reply?["ok"] == true, "\(String(describing: reply))")
        #expect(reply?["result"] == [:])
        #expect(nodes.a.request(second, "cancelDrag", cancel)["result"] == [:], "every retry")
        // Through another node: the store's record answers it.
        let (onB, _) = nodes.b.connect()
        let throughB = nodes.b.request(onB, "cancelDrag", cancel)
        #expect(throughB["ok"] == true, "\(throughB)")
    }

    /// A `cancelDrag` whose node dies (SIGKILL) right after the store took the drag's ending:
    /// nothing the node would write after that commit reaches the store, and its answer never
    /// leaves. The retry through another node, once the dead node's reservation of the key has
    /// lapsed, gets `{}`: the key's record is in the commit, not `drag_already_dropped`.
    @Test func aCancelDragWhoseNodeDiesRightAfterItsCommitIsAnsweredOkThroughAnotherNode() {
        var nodes = TwoNodes()
        let (source, _) = nodes.a.connect()
        let item: JSONValue = ["activity": ["activityType": "panes.document", "targetContentIdentifier": "doc_1"]]
        let drag = nodes.a.request(source, "beginDrag", ["items": [item]])["result"]?["drag"] ?? .null
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let cancel: JSONObject = ["drag": drag, "idempotencyKey": "cancel-2"]
        nodes.a.completesCommits = false
        nodes.a.send(source, "cancelDrag", cancel)
        nodes.a.holdsPersists = true
        #expect(nodes.a.completeCommits().messages(to: source).last?["result"] == [:], "the answer that never left")
        nodes.b.clock.advance(Millis(nodes.b.hub.settings.nodeLeaseMs) + 1)
        let (onB, _) = nodes.b.connect()
        let retried = nodes.b.request(onB, "cancelDrag", cancel)
        #expect(retried["ok"] == true, "\(retried)")
        #expect(retried["result"] == [:])
    }

    /// The first attempt is held on a node cut off from the database; its client, disconnected,
    /// retries through another node, which takes the key over and applies it. When the first
    /// node's write comes, the store leaves it out, and that node undoes what it had applied.
    @Test func aHeldAttemptLosesToTheRetryThroughAnotherNodeAndIsUndone() throws {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        nodes.a.holdsPersists = true
        let sent = nodes.a.send(onA, "createDocument", ["title": "Plan", "idempotencyKey": "held-1"])
        #expect(sent.messages(to: onA).count { $0["type"] == "reply" } == 1, "answered, held behind its persist")
        #expect(nodes.a.hub.documentCounts.stored == 1, "applied here, not stored")
        nodes.a.run(.closed(onA, abnormal: true))
        let (onB, _) = nodes.b.connect()
        let retry = nodes.b.request(onB, "createDocument", ["title": "Plan", "idempotencyKey": "held-1"])
        #expect(retry["ok"] == true)
        #expect(try nodes.b.store.loadState().documents.count == 1)
        // The database is back for a: its write is left out and undone.
        nodes.a.releasePersists()
        let stored = try nodes.a.store.loadState().documents
        #expect(stored.map(\.id.rawValue) == [retry["result"]?["document"]?["id"]?.stringValue].compactMap { $0 },
                "one document: the retry's")
        // a holds what the store holds once it has read b's record too.
        TwoNodes.deliver(nodes.b.effects, to: &nodes.a)
        #expect(nodes.a.hub.documentCounts.stored == 1)
        let (again, _) = nodes.a.connect()
        let listed = nodes.a.request(again, "observeDocuments")["result"]?["documents"]?.arrayValue ?? []
        #expect(listed.map { $0["id"] } == [retry["result"]?["document"]?["id"] ?? .null])
    }

    /// On a node of a cluster a keyed preference write the store could not take is not told
    /// "nothing was applied": an earlier attempt of it may be in flight on another node. It is
    /// `outcome_unknown`, and its retry is handled as a new attempt (not left waiting).
    @Test func aKeyedPreferenceWriteTheStoreCouldNotTakeIsOutcomeUnknownInACluster() throws {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        nodes.a.completesCommits = false
        let write: JSONObject = ["domain": "user", "keyPath": "k", "value": 1, "idempotencyKey": "down-1"]
        nodes.a.send(onA, "setPreference", write)
        let failed = nodes.a.completeCommits(.failed("the database is down"))
        #expect(failed.messages(to: onA).last?.errorCode == "outcome_unknown")
        nodes.a.completesCommits = true
        #expect(nodes.a.request(onA, "setPreference", write)["result"] == ["version": 1, "changed": true])
        // Without a key, nothing of it was applied: said so.
        nodes.a.completesCommits = false
        nodes.a.send(onA, "setPreference", ["domain": "user", "keyPath": "k", "value": 2])
        #expect(nodes.a.completeCommits(.failed("down")).messages(to: onA).last?.errorCode == "storage_failed")
    }

    /// A node that reserved a key for a request whose connection then went, before the request
    /// was handled, gives the reservation up: the retry through another node (whose lease still
    /// runs) goes on at once instead of waiting for it to go stale.
    @Test func aReservationWhoseRequestWentIsGivenUp() throws {
        var nodes = TwoNodes()
        _ = try nodes.a.store.register(node: NodeID("a"), leaseMs: 60_000)
        let (onA, _) = nodes.a.connect()
        nodes.a.completesLoads = false
        nodes.a.send(onA, "setUserInfo", ["userInfo": ["n": 1], "idempotencyKey": "gone-1"])
        nodes.a.run(.closed(onA, abnormal: true))
        let released = nodes.a.completeLoads()
        #expect(released.persisted.contains { if case .coordination(.releaseRequestKey) = $0 { true } else { false } })
        let (onB, _) = nodes.b.connect()
        #expect(nodes.b.request(onB, "setUserInfo", ["userInfo": ["n": 1], "idempotencyKey": "gone-1"])["ok"] == true)
    }

    /// A node whose copy of a domain is behind the store (it missed changes while the database
    /// was away) does not refuse a compare-and-set on that copy: it catches the domain up and
    /// checks again.
    @Test func aCompareAndSetIsRefusedOnlyAgainstTheStoresVersion() throws {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let (onB, _) = nodes.b.connect()
        // b holds the domain (an observer), then misses a's changes.
        _ = nodes.b.request(onB, "observe", ["domain": "user", "keyPath": "editor", "options": ["new"]])
        for version in 0..<3 {
            #expect(nodes.a.request(onA, "setPreference", ["domain": "user", "keyPath": "editor.size", "value": .int(Int64(version)),
                                                           "ifVersion": .int(Int64(version))])["ok"] == true)
        }
        let reply = nodes.b.request(onB, "setPreference", ["domain": "user", "keyPath": "editor.size", "value": 9, "ifVersion": 3])
        #expect(reply["result"] == ["version": 4, "changed": true], "\(reply)")
        let stale = nodes.b.request(onB, "setPreference", ["domain": "user", "keyPath": "editor.size", "value": 9, "ifVersion": 3])
        #expect(stale.errorCode == "version_conflict", "still refused when the store says so")
    }

    @Test func aPreferenceRetryThroughAnotherNodeIsAnsweredFromTheRecordItsCommitMeets() throws {
        var nodes = TwoNodes()
        let (onA, _) = nodes.a.connect()
        let write: JSONObject = ["domain": "user", "keyPath": "editor.fontSize", "value": 18, "ifVersion": 0,
                                         "idempotencyKey": "p1"]
        let first = nodes.a.request(onA, "setPreference", write)
        #expect(first["result"] == ["version": 1, "changed": true])
        // b has not read a's change: its commit is made at version 0 and carries the same key.
        let (onB, _) = nodes.b.connect()
        let retry = nodes.b.request(onB, "setPreference", write)
        #expect(retry["result"] == first["result"], "not version_conflict, and not applied twice: \(retry)")
        let domain = PreferenceDomain(workspace: "default", user: "alice")
        #expect(try nodes.a.store.loadPreferences(domain)?.version == 1)

        // b has read a's change now: the retry fails its own checks (the version moved, by its
        // first attempt), so the store is asked for the key's record before it is answered.
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        let (again, _) = nodes.b.connect()
        #expect(nodes.b.request(again, "setPreference", write)["result"] == first["result"], "not version_conflict")
        var unchanged = write
        unchanged["ifVersion"] = nil
        unchanged["idempotencyKey"] = "p2"
        let second = nodes.a.request(onA, "setPreference", ["domain": "user", "keyPath": "editor.fontSize", "value": 20,
                                                             "idempotencyKey": "p2"])
        TwoNodes.deliver(nodes.a.effects, to: &nodes.b)
        unchanged["value"] = 20
        #expect(nodes.b.request(again, "setPreference", unchanged)["result"] == second["result"], "not `changed: false`")
        // A key nobody recorded keeps its own answer.
        var other = write
        other["idempotencyKey"] = "p3"
        #expect(nodes.b.request(again, "setPreference", other).errorCode == "version_conflict")
    }
}
