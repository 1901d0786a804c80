import Foundation
import PanesCore
import PanesPostgres
import PanesStorageTestSupport
import Testing

/// What every `SharedStore` must do besides being a `Store`: the change feeds other nodes
/// follow, node leases, and session claims with fencing. Run on the memory store (the
/// reference) and PostgreSQL.
@Suite struct SharedStoreConformanceTests {
    /// An empty document (`doc_a1`) in the harness's store, with that store and another node's
    /// connection to the same database (the same store where there is no other).
    private static func emptyDocumentOnTwoNodes(_ harness: StoreHarness) throws
        -> (store: any SharedStore, other: any SharedStore, id: DocumentID, channel: Channel) {
        let store = harness.shared
        let other = try harness.secondNode() ?? store
        try store.apply([.createDocument(Fixtures.document(), text: "")])
        let id = DocumentID("doc_a1")
        return (store, other, id, .document(id))
    }

    private static func commit(_ id: UInt64, _ channel: Channel, base: Int64, _ commands: [StoreCommand]) -> StoreWrite {
        .commit(Commit(id: CommitID(id), channel: channel, base: base, commands: commands))
    }

    // MARK: Records

    @Test(arguments: StoreKind.shared)
    func recordChangesNameEachChangedRecordOnceOldestFirstWithDeletes(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        try store.apply([.putSession(Fixtures.bareSession(id: "a1")), .createDocument(Fixtures.document(), text: "")])
        let cursor = try store.loadState().recordCursor
        #expect(try store.loadRecordChanges(after: cursor) == RecordChanges(cursor: cursor))

        var renamed = Fixtures.bareSession(id: "b2")
        renamed.title = "second put wins"
        try store.apply([.putSession(Fixtures.bareSession(id: "b2")), .deleteSession(SessionID("a1"))])
        try store.apply([.putSession(renamed), .renameDocument(DocumentID("doc_a1"), title: "Renamed"),
                         .createDocument(Fixtures.document(id: "doc_b2"), text: "x")])
        try store.apply([.deleteDocument(DocumentID("doc_b2"))])

        let changes = try store.loadRecordChanges(after: cursor)
        var document = Fixtures.document()
        document.title = "Renamed"
        #expect(changes.sessions == [renamed])
        #expect(changes.deletedSessions == [SessionID("a1")])
        #expect(changes.documents == [document])
        #expect(changes.deletedDocuments == [DocumentID("doc_b2")])
        #expect(changes.claims == [SessionID("b2"): SessionClaim(node: nil, epoch: 0)])
        #expect(changes.cursor > cursor)
        #expect(changes.cursor == (try store.loadState().recordCursor))
        #expect(try store.loadRecordChanges(after: changes.cursor) == RecordChanges(cursor: changes.cursor))
    }

    /// Discard cleans everywhere: a node that has not read a deletion yet may still write the
    /// session (a title it follows, its lease); the write must not bring the session back.
    @Test(arguments: StoreKind.shared)
    func aDeletedSessionIsNotBroughtBackByALateWriteOrClaim(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        var session = Fixtures.bareSession(id: "a1")
        try store.apply([.putSession(session), .coordination(.claimSession(session.id, SessionClaim(node: NodeID("n1"), epoch: 1)))])
        let cursor = try store.loadState().recordCursor
        try store.apply([.deleteSession(session.id)])
        session.title = "written late, by a node that had not read the deletion"
        session.revision = 5
        try store.apply([.putSession(session)])
        try store.apply([.putSession(Fixtures.bareSession(id: "a1"))])
        // A claim on it (whatever the outcome of its commit) holds nothing either.
        _ = try store.apply([Self.commit(1, .coordination(.session(session.id)), base: 0,
                                         [.coordination(.claimSession(session.id, SessionClaim(node: NodeID("n2"), epoch: 1)))])])
        #expect(try store.loadState().sessions.isEmpty)
        #expect(try store.loadState().claims[session.id] == nil)
        let changes = try store.loadRecordChanges(after: cursor)
        #expect(changes.sessions.isEmpty)
        #expect(changes.deletedSessions == [session.id])
        #expect(changes.claims.isEmpty)
        // Other sessions are written as ever.
        try store.apply([.putSession(Fixtures.bareSession(id: "b2"))])
        #expect(try store.loadState().sessions.map(\.id) == [SessionID("b2")])
    }

    @Test(arguments: StoreKind.shared)
    func aFailedBatchAdvancesNoCursor(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        try harness.apply([.putSession(Fixtures.bareSession(id: "a1"))])
        let cursor = try harness.shared.loadState().recordCursor
        harness.failNextBatch(afterCommands: 1)
        #expect(throws: (any Error).self) {
            try harness.apply([.putSession(Fixtures.bareSession(id: "b2")), .putSession(Fixtures.bareSession(id: "c3"))])
        }
        #expect(try harness.shared.loadRecordChanges(after: cursor) == RecordChanges(cursor: cursor))
    }

    // MARK: Preferences

    @Test(arguments: StoreKind.shared)
    func thePreferenceLogKeepsPutsAndRemovalsInVersionOrder(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let domain = Fixtures.adaDomain
        try store.apply([.putPreference(domain, keyPath: "theme", value: "dark", version: 1),
                         .putPreference(domain, keyPath: "font", value: ["size": 13.5], version: 2)])
        _ = try store.apply([Self.commit(1, .preferences(domain), base: 2,
                                         [.removePreference(domain, keyPath: "theme", version: 3)])])
        try store.apply([.putPreference(Fixtures.bobDomain, keyPath: "theme", value: "light", version: 1)])

        #expect(try store.loadPreferenceChanges(domain, after: 0) == [
            PreferenceChange(keyPath: "theme", value: "dark", version: 1),
            PreferenceChange(keyPath: "font", value: ["size": 13.5], version: 2),
            PreferenceChange(keyPath: "theme", value: nil, version: 3),
        ])
        #expect(try store.loadPreferenceChanges(domain, after: 2) == [PreferenceChange(keyPath: "theme", value: nil, version: 3)])
        #expect(try store.loadPreferenceChanges(domain, after: 3) == [])
        #expect(try store.loadPreferenceChanges(Fixtures.workspaceDomain, after: 0) == [])
    }

    // MARK: Documents

    @Test(arguments: StoreKind.shared)
    func operationsAfterARevisionAreReadUntilTheLogWasCompactedPastIt(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let id = DocumentID("doc_a1")
        var batch: [StoreCommand] = [.createDocument(Fixtures.document(), text: "")]
        for revision in 1...6 {
            batch.append(.appendOperation(id, Fixtures.appended("x", at: Int64(revision), after: revision - 1), length: revision))
        }
        try store.apply(batch)
        #expect(try store.loadOperations(id, after: 0)?.map(\.revision) == [1, 2, 3, 4, 5, 6])
        #expect(try store.loadOperations(id, after: 4)?.map(\.revision) == [5, 6])
        #expect(try store.loadOperations(id, after: 6) == [])

        try store.apply([.snapshotDocument(id, revision: 5, text: "xxxxx", keepFrom: 3)])
        #expect(try store.loadOperations(id, after: 2)?.map(\.revision) == [3, 4, 5, 6])
        #expect(try store.loadOperations(id, after: 1) == nil, "revision 2 was compacted away")
        #expect(try store.loadOperations(id, after: 6) == [])
        #expect(try store.loadOperations(DocumentID("doc_nope"), after: 0) == nil)

        try store.apply([.deleteDocument(id)])
        #expect(try store.loadOperations(id, after: 6) == nil)
    }

    // MARK: Nodes and claims

    @Test(arguments: StoreKind.shared)
    func aLeaseThatRanOutStaysEndedAndItsNodeComesBackOnlyUnderANewIdentity(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let (a, b) = (NodeID("node-a"), NodeID("node-b"))
        // A lease that ended a second ago, by the store's own clock.
        #expect(try store.register(node: a, leaseMs: -1_000) == [])
        #expect(try store.register(node: b, leaseMs: 60_000) == [a])
        // Too late to renew: it is told so, and stays gone for everyone.
        #expect(throws: NodeRevoked(node: a)) { try store.heartbeat(node: a, leaseMs: 60_000) }
        #expect(throws: NodeRevoked(node: a)) { try store.heartbeat(node: a, leaseMs: 60_000) }
        #expect(try store.heartbeat(node: b, leaseMs: 60_000) == [a])
        // Back as a new node (on a connection of its own, as a node's heartbeat has): alive,
        // and the old identity is still gone.
        let again = NodeID("node-a2")
        let beat = try harness.secondNode() ?? store
        #expect(try beat.register(node: again, leaseMs: 60_000) == [a])
        #expect(try store.checkNodes(node: b, leaseMs: 60_000) == [a])
    }

    @Test(arguments: StoreKind.shared)
    func writesOfANodeWhoseLeaseEndedAreRefusedWithNothingApplied(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let (a, b) = (NodeID("node-a"), NodeID("node-b"))
        // Each node's heartbeat on a connection of its own, as nodes have.
        let beatA = try harness.secondNode() ?? store
        let beatB = try harness.secondNode() ?? store
        _ = try beatA.register(node: a, leaseMs: 60_000)
        _ = try beatB.register(node: b, leaseMs: 60_000)
        store.fence(as: a, leaseMs: 60_000)
        try harness.apply([.putSession(Fixtures.bareSession(id: "s1"))])
        // a's connection drops (its lock with it); b ends its lease.
        if let postgres = beatA as? PostgresStore, postgres !== store as? PostgresStore {
            postgres.close()
        } else {
            (store as? MemoryStore)?.dropConnection(of: a)
        }
        var gone = try beatB.checkNodes(node: b, leaseMs: 60_000)
        for _ in 0..<200 where gone.isEmpty {
            usleep(10_000)
            gone = try beatB.checkNodes(node: b, leaseMs: 60_000)
        }
        #expect(gone == [a])
        #expect(throws: NodeRevoked(node: a)) { try harness.apply([.putSession(Fixtures.bareSession(id: "s2"))]) }
        let claim = StoreWrite.commit(Commit(id: CommitID(1), channel: .coordination(.session(SessionID("s1"))), base: 0,
                                             commands: [.coordination(.claimSession(SessionID("s1"), SessionClaim(node: a, epoch: 1)))]))
        #expect(throws: NodeRevoked(node: a)) { try store.apply([claim]) }
        #expect(try store.loadState().claims[SessionID("s1")] == nil)
        #expect(try harness.reloaded().sessions.map(\.id) == [SessionID("s1")])
        // Unfenced (a single node's store, tests): written.
        harness.shared.fence(as: nil, leaseMs: 60_000)
        try harness.apply([.putSession(Fixtures.bareSession(id: "s3"))])
        #expect(try harness.reloaded().sessions.map(\.id).sorted() == [SessionID("s1"), SessionID("s3")])
    }

    @Test(arguments: StoreKind.shared)
    func aClaimAdvancesTheEpochAndWritesAtAStaleEpochConflict(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let id = SessionID("a1")
        let channel = Channel.coordination(.session(id))
        let first = SessionClaim(node: NodeID("node-a"), epoch: 1)
        try store.apply([.putSession(Fixtures.bareSession(id: "a1"))])
        let cursor = try store.loadState().recordCursor
        #expect(try store.apply([Self.commit(1, channel, base: 0, [.coordination(.claimSession(id, first))])]) == [CommitID(1): .committed])
        #expect(try store.loadState().claims == [id: first])
        #expect(try store.loadRecordChanges(after: cursor).claims == [id: first], "a claim is a record change")

        // Node B takes it over (the holder was dead): epoch 2.
        let second = SessionClaim(node: NodeID("node-b"), epoch: 2)
        #expect(try store.apply([Self.commit(2, channel, base: 1, [.coordination(.claimSession(id, second))])]) == [CommitID(2): .committed])
        // Node A, still at epoch 1, is fenced off: its write conflicts and nothing is written.
        var stale = Fixtures.bareSession(id: "a1")
        stale.title = "from the old holder"
        let outcomes = try store.apply([Self.commit(3, channel, base: 1, [.putSession(stale)]),
                                        Self.commit(4, channel, base: 2, [.putSession(Fixtures.fullSession(id: "a1"))])])
        #expect(outcomes == [CommitID(3): .conflict, CommitID(4): .committed])
        #expect(try store.loadState().sessions == [Fixtures.fullSession(id: "a1")])
        #expect(try store.loadState().claims == [id: second])

        try store.apply([.deleteSession(id)])
        #expect(try store.loadState().claims == [:])
    }

    /// A failover's takeovers come as many claims in one transaction (PostgreSQL reads their
    /// epochs in one statement): each is compared with its own session's epoch as it stands
    /// when its turn comes, a claim written earlier in the batch included.
    @Test(arguments: StoreKind.shared)
    func claimsOfManySessionsInOneBatchEachCompareWithTheirOwnEpoch(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let (a, b) = (NodeID("node-a"), NodeID("node-b"))
        let ids = (1...4).map { SessionID("s\($0)") }
        for id in ids { try store.apply([.putSession(Fixtures.bareSession(id: id.rawValue))]) }
        for (index, id) in [ids[0], ids[2], ids[3]].enumerated() {
            #expect(try store.apply([Self.commit(UInt64(index + 1), .coordination(.session(id)), base: 0, [.coordination(.claimSession(id, SessionClaim(node: a, epoch: 1)))])])
                        == [CommitID(UInt64(index + 1)): .committed])
        }
        let outcomes = try store.apply([
            Self.commit(10, .coordination(.session(ids[0])), base: 1, [.coordination(.claimSession(ids[0], SessionClaim(node: b, epoch: 2)))]),
            Self.commit(11, .coordination(.session(ids[1])), base: 0, [.coordination(.claimSession(ids[1], SessionClaim(node: b, epoch: 1)))]),
            // Stale: s3 is at epoch 1.
            Self.commit(12, .coordination(.session(ids[2])), base: 0, [.coordination(.claimSession(ids[2], SessionClaim(node: b, epoch: 1)))]),
            // s4's claim moves within the batch, before its commit.
            .persist([.coordination(.claimSession(ids[3], SessionClaim(node: b, epoch: 2)))]),
            Self.commit(13, .coordination(.session(ids[3])), base: 2, [.coordination(.claimSession(ids[3], SessionClaim(node: b, epoch: 3)))]),
            // Again on s1, after its claim in this batch.
            Self.commit(14, .coordination(.session(ids[0])), base: 1, [.coordination(.claimSession(ids[0], SessionClaim(node: a, epoch: 2)))]),
        ])
        #expect(outcomes == [CommitID(10): .committed, CommitID(11): .committed, CommitID(12): .conflict,
                             CommitID(13): .committed, CommitID(14): .conflict])
        #expect(try store.loadState().claims == [ids[0]: SessionClaim(node: b, epoch: 2), ids[1]: SessionClaim(node: b, epoch: 1),
                                                 ids[2]: SessionClaim(node: a, epoch: 1), ids[3]: SessionClaim(node: b, epoch: 3)])
    }

    @Test(arguments: StoreKind.shared)
    func aConflictOnADocumentCarriesTheOperationsCommittedAfterItsBase(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        // The winner writes through a connection of its own, as another node would.
        let (store, other, id, channel) = try Self.emptyDocumentOnTwoNodes(harness)
        let first = Fixtures.appended("a", at: 1, after: 0)
        let second = Fixtures.appended("b", at: 2, after: 1)
        #expect(try other.apply([Self.commit(1, channel, base: 0, [.appendOperation(id, first, length: 1),
                                                                   .appendOperation(id, second, length: 2)])])
                == [CommitID(1): .committed])
        // The loser, still at revision 0: nothing of its is written, and it learns both.
        let late = Fixtures.appended("c", at: 1, after: 0)
        #expect(try store.apply([Self.commit(2, channel, base: 0, [.appendOperation(id, late, length: 1)])])
                == [CommitID(2): .behind([first, second])])
        #expect(try store.apply([Self.commit(3, channel, base: 1, [.appendOperation(id, late, length: 1)])])
                == [CommitID(3): .behind([second])])
        // Retried on top of them, it commits.
        let retried = Fixtures.appended("c", at: 3, after: 2)
        #expect(try store.apply([Self.commit(4, channel, base: 2, [.appendOperation(id, retried, length: 3)])])
                == [CommitID(4): .committed])
        #expect(try store.loadOperations(id, after: 0) == [first, second, retried])

        // Compacted past the base: a plain conflict (the node reads the snapshot instead).
        try store.apply([.snapshotDocument(id, revision: 3, text: Rope("abc"), keepFrom: 3)])
        #expect(try store.apply([Self.commit(5, channel, base: 1, [.appendOperation(id, late, length: 1)])])
                == [CommitID(5): .conflict])
        // No such document, and other channels: a plain conflict.
        #expect(try store.apply([Self.commit(6, .document(DocumentID("doc_none")), base: 0,
                                             [.appendOperation(DocumentID("doc_none"), late, length: 1)])])
                == [CommitID(6): .conflict])
        #expect(try store.apply([Self.commit(7, channel, base: -1, [.createDocument(Fixtures.document(), text: "")])])
                == [CommitID(7): .conflict])
    }

    @Test(arguments: StoreKind.shared)
    func aConflictResolvedInsideTheTransactionWritesTheRetryInItsPlace(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let (store, other, id, channel) = try Self.emptyDocumentOnTwoNodes(harness)
        let theirs = Fixtures.appended("a", at: 1, after: 0)
        try other.apply([Self.commit(1, channel, base: 0, [.appendOperation(id, theirs, length: 1)])])
        let mine = Fixtures.appended("b", at: 1, after: 0)
        let retried = Fixtures.appended("b", at: 2, after: 1)
        var asked: [(CommitID, [StoredOperation])] = []
        let outcomes = try store.apply([
            Self.commit(2, channel, base: 0, [.appendOperation(id, mine, length: 1)]),
            .persist([.putSession(Fixtures.bareSession())]),
        ]) { commit, operations in
            asked.append((commit.id, operations))
            return Commit(id: CommitID(3), channel: channel, base: 1, commands: [.appendOperation(id, retried, length: 2)])
        }
        #expect(asked.map(\.0) == [CommitID(2)])
        #expect(asked.map(\.1) == [[theirs]])
        #expect(outcomes.outcomes == [CommitID(2): .behind([theirs]), CommitID(3): .committed])
        #expect(try store.loadOperations(id, after: 0) == [theirs, retried])
        #expect(try store.loadState().sessions == [Fixtures.bareSession()])

        // A retry made on a stale base conflicts as any commit would, and is not resolved again.
        let stale = try store.apply([Self.commit(4, channel, base: 0, [.appendOperation(id, mine, length: 1)])]) { commit, _ in
            Commit(id: CommitID(5), channel: channel, base: 1, commands: [.appendOperation(id, retried, length: 2)])
        }
        #expect(stale.outcomes == [CommitID(4): .behind([theirs, retried]), CommitID(5): .behind([retried])])
        #expect(try store.loadOperations(id, after: 0) == [theirs, retried])
    }

    @Test(arguments: StoreKind.shared)
    func aDragEndsOnceAndItsEndingIsForgottenLongAfterItExpired(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let expiry: Millis = 10_000_000
        let end = { (id: UInt64, drag: String, expiresAt: Millis) in
            Self.commit(id, .coordination(.drag(Identifier(drag))), base: 0, [.coordination(.endDrag(drag, expiresAt: expiresAt))])
        }
        // Two drops of one drag, in one batch or in two: the first ends it, the second conflicts.
        #expect(try store.apply([end(1, "drg_1", expiry), end(2, "drg_1", expiry)])
                == [CommitID(1): .committed, CommitID(2): .conflict])
        #expect(try store.apply([end(3, "drg_1", expiry)]) == [CommitID(3): .conflict])
        #expect(try store.apply([end(4, "drg_2", expiry)]) == [CommitID(4): .committed], "each drag has its own channel")
        // A drag's ending is no record change: nobody reloads for it.
        let cursor = try store.loadState().recordCursor
        #expect(try store.apply([end(5, "drg_3", expiry)]) == [CommitID(5): .committed])
        #expect(try store.loadRecordChanges(after: cursor) == RecordChanges(cursor: cursor))
        // Ending a drag that expires more than `DragEnd.keptMs` after them forgets their endings.
        #expect(try store.apply([end(6, "drg_4", expiry + DragEnd.keptMs + 1)]) == [CommitID(6): .committed])
        #expect(try store.apply([end(7, "drg_1", expiry)]) == [CommitID(7): .committed])
        #expect(try store.apply([end(8, "drg_4", expiry)]) == [CommitID(8): .conflict])
    }

    /// A drop onto a window on another node is settled once its drag has ended: the receiving
    /// node's delivery and the dropping node's taking the items back both commit at base 1, and
    /// exactly one wins (`CoordinationCommand.settleDrop`).
    @Test(arguments: StoreKind.shared)
    func aRemoteDropIsSettledOnceAfterItsDragEnded(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let channel = Channel.coordination(.drag(Identifier("drg_1")))
        let settle = { (id: UInt64) in Self.commit(id, channel, base: 1, [.coordination(.settleDrop("drg_1"))]) }
        // Not ended yet: nothing to settle.
        #expect(try store.apply([settle(1)]) == [CommitID(1): .conflict])
        #expect(try store.apply([Self.commit(2, channel, base: 0, [.coordination(.endDrag("drg_1", expiresAt: 10_000_000))])])
                == [CommitID(2): .committed])
        // Delivered and taken back in one batch or in two: the first wins.
        #expect(try store.apply([settle(3), settle(4)]) == [CommitID(3): .committed, CommitID(4): .conflict])
        #expect(try store.apply([settle(5)]) == [CommitID(5): .conflict])
        // A drop through another node of the settled drag still finds it ended.
        #expect(try store.apply([Self.commit(6, channel, base: 0, [.coordination(.endDrag("drg_1", expiresAt: 10_000_000))])])
                == [CommitID(6): .conflict])
    }

    /// The window's node settles a drop with the dropper's key record written for the dropping
    /// node (`recordHeldRequest`): only over that node's reservation, still held, in the same
    /// transaction. With no reservation (never made, or released after the dropping node gave
    /// the drop up) or another node's (a retry took the key over), the commit is refused and
    /// leaves the drop unsettled, for the drag's node to settle; once recorded, the record.
    @Test(arguments: StoreKind.shared)
    func aSettlingWrittenForTheDroppingNodeNeedsItsReservationStillHeld(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let (a, c) = (NodeID("node-a"), NodeID("node-c"))
        _ = try store.register(node: a, leaseMs: 60_000)
        _ = try store.register(node: c, leaseMs: 60_000)
        let channel = Channel.coordination(.drag(Identifier("drg_1")))
        #expect(try store.apply([Self.commit(1, channel, base: 0, [.coordination(.endDrag("drg_1", expiresAt: 10_000_000))])])
                == [CommitID(1): .committed])
        let record = RequestRecord(slot: RequestKeySlot(owner: OwnerKey(workspace: "acme", user: "zoë"), key: RequestKey("k\u{E9}")),
                                   fingerprint: "drop:1:0", result: ["delivered": "scn_1"], at: 7)
        let reservation = KeyReservation(slot: record.slot, fingerprint: record.fingerprint, at: 5)
        let settle = { (id: UInt64) in
            Self.commit(id, channel, base: 1, [.coordination(.settleDrop("drg_1")),
                                               .coordination(.recordHeldRequest(record, holder: a))])
        }
        func refused(_ outcome: CommitOutcome?) -> Bool { if case .failed? = outcome { true } else { false } }
        // Never reserved.
        #expect(refused(try store.apply([settle(2)])[CommitID(2)]))
        // Reserved by a, then given up.
        #expect(try store.reserveRequestKeys([reservation], node: a, staleBefore: 0) == [record.slot: .reserved])
        try harness.apply([.coordination(.releaseRequestKey(record.slot, node: a))])
        #expect(refused(try store.apply([settle(3)])[CommitID(3)]))
        // Taken over by c (a retry), whose attempt is still in flight.
        #expect(try store.reserveRequestKeys([reservation], node: c, staleBefore: 0) == [record.slot: .reserved])
        #expect(refused(try store.apply([settle(4)])[CommitID(4)]))
        #expect(try store.loadRequestRecords([record.slot]).isEmpty, "nothing recorded")
        // Key spellings are bytes: the composed key's reservation is not the decomposed one's.
        try harness.apply([.coordination(.releaseRequestKey(record.slot, node: c))])
        let decomposed = KeyReservation(slot: RequestKeySlot(owner: record.slot.owner, key: RequestKey("ke\u{301}")),
                                        fingerprint: record.fingerprint, at: 5)
        #expect(try store.reserveRequestKeys([decomposed], node: a, staleBefore: 0) == [decomposed.slot: .reserved])
        #expect(refused(try store.apply([settle(5)])[CommitID(5)]))
        // Held by a: settled, with the record, over the reservation; the drop still unsettled
        // until then (each refusal left the channel at 1).
        #expect(try store.reserveRequestKeys([reservation], node: a, staleBefore: 0) == [record.slot: .reserved])
        #expect(try store.apply([settle(6)]) == [CommitID(6): .committed])
        #expect(try store.loadRequestRecords([record.slot]) == [record])
        #expect(try store.apply([settle(7)]) == [CommitID(7): .recorded([record])])
        #expect(try store.apply([Self.commit(8, channel, base: 1, [.coordination(.settleDrop("drg_1"))])]) == [CommitID(8): .conflict])
    }

    /// A settling written for the dropping node is judged by the store as it stands when the
    /// commit is reached, not when its batch began: after a write of the same batch released
    /// the key, refused and nothing written; after one that settled over it, the record.
    @Test(arguments: StoreKind.shared)
    func aSettlingIsJudgedByWhatEarlierWritesOfItsBatchLeft(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let a = NodeID("node-a")
        _ = try store.register(node: a, leaseMs: 60_000)
        let channel = Channel.coordination(.drag(Identifier("drg_1")))
        #expect(try store.apply([Self.commit(1, channel, base: 0, [.coordination(.endDrag("drg_1", expiresAt: 10_000_000))])])
                == [CommitID(1): .committed])
        let record = RequestRecord(slot: RequestKeySlot(owner: OwnerKey(workspace: "acme", user: "zoë"), key: RequestKey("k1")),
                                   fingerprint: "drop:1:0", result: ["delivered": "scn_1"], at: 7)
        let reservation = KeyReservation(slot: record.slot, fingerprint: record.fingerprint, at: 5)
        let settle = { (id: UInt64) in
            Self.commit(id, channel, base: 1, [.coordination(.settleDrop("drg_1")),
                                               .coordination(.recordHeldRequest(record, holder: a))])
        }
        #expect(try store.reserveRequestKeys([reservation], node: a, staleBefore: 0) == [record.slot: .reserved])
        // Given up and released, then settled, in one batch: the release stands, the settle is refused.
        let outcomes = try store.apply([.persist([.coordination(.releaseRequestKey(record.slot, node: a))]), settle(2)])
        if case .failed? = outcomes[CommitID(2)] {} else { Issue.record("settled over a released key: \(outcomes)") }
        #expect(try store.loadRequestRecords([record.slot]).isEmpty, "nothing recorded")
        // Free now: reserved again and settled twice in one batch; the second finds the first's record.
        #expect(try store.reserveRequestKeys([reservation], node: a, staleBefore: 0) == [record.slot: .reserved])
        #expect(try store.apply([settle(3), settle(4)]) == [CommitID(3): .committed, CommitID(4): .recorded([record])])
        #expect(try store.loadRequestRecords([record.slot]) == [record])
    }

    /// A drop its own node delivers (and a cancel, an expiry) ends and settles the drag in one
    /// commit at base 0: the drag's node settling a drop left unsettled at base 1 then conflicts
    /// (`Hub.recoverDrop`), and wins only over an ending that left it unsettled.
    @Test(arguments: StoreKind.shared)
    func aDragEndedAndSettledInOneCommitIsNotSettledAgain(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let ended = Channel.coordination(.drag(Identifier("drg_1")))
        #expect(try store.apply([Self.commit(1, ended, base: 0, [.coordination(.endDrag("drg_1", expiresAt: 10_000_000)),
                                                                 .coordination(.settleDrop("drg_1"))])])
                == [CommitID(1): .committed])
        #expect(try store.apply([Self.commit(2, ended, base: 1, [.coordination(.settleDrop("drg_1"))])])
                == [CommitID(2): .conflict])
        #expect(try store.apply([Self.commit(3, ended, base: 0, [.coordination(.endDrag("drg_1", expiresAt: 10_000_000))])])
                == [CommitID(3): .conflict], "still ended")
        let unsettled = Channel.coordination(.drag(Identifier("drg_2")))
        #expect(try store.apply([Self.commit(4, unsettled, base: 0, [.coordination(.endDrag("drg_2", expiresAt: 10_000_000))])])
                == [CommitID(4): .committed])
        #expect(try store.apply([Self.commit(5, unsettled, base: 1, [.coordination(.settleDrop("drg_2"))])])
                == [CommitID(5): .committed])
    }

    /// A drop's `itemsDropped` held for a window's session (`holdDrop`): written only with the
    /// commit that settles the drop (a conflicting one writes nothing), read by session oldest
    /// first while kept, as another node reads it, not written over by a second hold of the same
    /// drag, forgotten when released or once its keeping ended before a later hold.
    @Test(arguments: StoreKind.shared)
    func aHeldDropIsWrittenWithItsSettlingCommitAndReadUntilReleasedOrPastItsKeeping(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let other = try harness.secondNode() ?? store
        let window = SessionID("ses_window"), elsewhere = SessionID("ses_elsewhere")
        func held(_ drag: String, _ session: SessionID = window, keptUntil: Millis, title: String = "Notes") -> HeldDrop {
            HeldDrop(session: session, drag: Identifier(drag), event: [
                "drag": .string(drag), "operation": "copy", "items": [["activityType": "panes.document", "title": .string(title)]],
            ], keptUntil: keptUntil)
        }
        func settle(_ id: UInt64, _ drag: String, base: Int64, _ hold: HeldDrop) -> StoreWrite {
            Self.commit(id, .coordination(.drag(Identifier(drag))), base: base, [
                .coordination(.endDrag(drag, expiresAt: 10_000_000)), .coordination(.settleDrop(drag)),
                .coordination(.holdDrop(hold, forgetBefore: 1_000)),
            ])
        }
        let first = held("drg_b", keptUntil: 5_000), second = held("drg_a", keptUntil: 6_000)
        #expect(try store.apply([settle(1, "drg_b", base: 0, first)]) == [CommitID(1): .committed])
        #expect(try store.apply([settle(2, "drg_a", base: 0, second),
                                 settle(3, "drg_c", base: 0, held("drg_c", elsewhere, keptUntil: 5_000))])
                == [CommitID(2): .committed, CommitID(3): .committed])
        // A settling that conflicts holds nothing.
        #expect(try store.apply([settle(4, "drg_b", base: 0, held("drg_b", keptUntil: 9_000, title: "Other"))])
                == [CommitID(4): .conflict])
        #expect(try other.loadHeldDrops(window, now: 1_000) == [first, second])
        #expect(try other.loadHeldDrops(window, now: 5_500) == [second], "past its keeping: not read")
        #expect(try other.loadHeldDrops(SessionID("ses_none"), now: 0) == [])
        // Held again for the same drag: the first stays.
        try store.apply([.coordination(.holdDrop(held("drg_a", keptUntil: 7_000, title: "Other"), forgetBefore: 1_000))])
        #expect(try other.loadHeldDrops(window, now: 1_000) == [first, second])
        // Released: gone; the other session's stays.
        try store.apply([.coordination(.releaseDrop(first.key))])
        #expect(try other.loadHeldDrops(window, now: 1_000) == [second])
        #expect(try other.loadHeldDrops(elsewhere, now: 1_000).map(\.drag) == [Identifier("drg_c")])
        // A later hold forgets those whose keeping ended before its time.
        try store.apply([.coordination(.holdDrop(held("drg_d", elsewhere, keptUntil: 9_000), forgetBefore: 5_500))])
        #expect(try other.loadHeldDrops(elsewhere, now: 0).map(\.drag) == [Identifier("drg_d")])
        #expect(try other.loadHeldDrops(window, now: 0) == [second])
    }

    /// A claim naming a node says, in its own write, whether drops are held for its session:
    /// the shared apply that wrote it returns the session with its outcomes
    /// (`AppliedWrites.heldDropsFound`), and no later call says it again. A release, a claim that
    /// conflicts and a claim of a session with nothing held say nothing.
    @Test(arguments: StoreKind.shared)
    func aClaimSaysWhetherDropsAreHeldForItsSession(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        func apply(_ writes: [StoreWrite]) throws -> AppliedWrites { try store.apply(writes, resolvingConflicts: { _, _ in nil }) }
        func persist(_ commands: [StoreCommand]) throws -> AppliedWrites { try apply([.persist(commands)]) }
        let window = SessionID("ses_window"), empty = SessionID("ses_empty")
        let held = HeldDrop(session: window, drag: Identifier("drg_a"), event: ["drag": "drg_a"], keptUntil: 5_000)
        #expect(try persist([.coordination(.holdDrop(held, forgetBefore: 0))]) == AppliedWrites(), "a hold is no claim")
        func claim(_ id: UInt64, _ session: SessionID, _ node: String?, base: Int64, epoch: Int64) -> StoreWrite {
            Self.commit(id, .coordination(.session(session)), base: base,
                        [.coordination(.claimSession(session, SessionClaim(node: node.map(NodeID.init), epoch: epoch)))])
        }
        #expect(try apply([claim(1, empty, "a", base: 0, epoch: 1), claim(2, window, "a", base: 0, epoch: 1)])
                == AppliedWrites(outcomes: [CommitID(1): .committed, CommitID(2): .committed], heldDropsFound: [window]))
        #expect(try apply([claim(3, window, "b", base: 0, epoch: 1)]) == AppliedWrites(outcomes: [CommitID(3): .conflict]))
        #expect(try apply([claim(4, window, nil, base: 1, epoch: 1)]) == AppliedWrites(outcomes: [CommitID(4): .committed]),
                "a release")
        // Claimed in a persist (a session's first write) too.
        #expect(try persist([.coordination(.claimSession(window, SessionClaim(node: NodeID("b"), epoch: 2)))]).heldDropsFound
                == [window])
        try store.apply([.coordination(.releaseDrop(held.key))])
        #expect(try apply([claim(5, window, "a", base: 2, epoch: 3)]) == AppliedWrites(outcomes: [CommitID(5): .committed]),
                "nothing held any more")
        // Held again and claimed through every store's `apply`, which returns outcomes only: the
        // next shared apply says nothing of what that claim found.
        try store.apply([.coordination(.holdDrop(held, forgetBefore: 0)),
                         .coordination(.claimSession(window, SessionClaim(node: NodeID("b"), epoch: 4)))])
        #expect(try persist([.putSession(Fixtures.bareSession(id: "ses_third"))]).heldDropsFound == [])
        // A batch whose claim found it but that then failed returns nothing (it throws), and
        // leaves nothing for the next apply to say; the same batch, applied, says it.
        let batch: [StoreCommand] = [.coordination(.claimSession(window, SessionClaim(node: NodeID("a"), epoch: 5))),
                                     .putSession(Fixtures.bareSession(id: "ses_other"))]
        harness.failNextBatch(afterCommands: 1)
        #expect(throws: (any Error).self) { try persist(batch) }
        #expect(try persist([.putSession(Fixtures.bareSession(id: "ses_fourth"))]).heldDropsFound == [],
                "nothing left by an apply that threw")
        #expect(try persist(batch).heldDropsFound == [window])
    }

    /// `pruneHeldDrops` deletes the held drops whose keeping ended before its time, whoever
    /// held them, and no other.
    @Test(arguments: StoreKind.shared)
    func pruningHeldDropsDeletesThosePastTheirKeepingOnly(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let other = try harness.secondNode() ?? store
        func held(_ drag: String, _ session: String, keptUntil: Millis) -> HeldDrop {
            HeldDrop(session: SessionID(session), drag: Identifier(drag), event: ["drag": .string(drag)], keptUntil: keptUntil)
        }
        let old = held("drg_old", "ses_a", keptUntil: 5_000), edge = held("drg_edge", "ses_b", keptUntil: 6_000)
        let kept = held("drg_kept", "ses_a", keptUntil: 9_000)
        try store.apply([old, edge, kept].map { .coordination(.holdDrop($0, forgetBefore: 0)) })
        try other.apply([.coordination(.pruneHeldDrops(before: 6_000))])
        #expect(try store.loadHeldDrops(SessionID("ses_a"), now: 0) == [kept])
        #expect(try store.loadHeldDrops(SessionID("ses_b"), now: 0) == [edge], "kept until its time")
    }

    /// A discarded session's held drops are its user's content: `deleteSession` deletes them in
    /// the same write (another session's stay), and a failed batch that deleted it keeps them.
    @Test(arguments: StoreKind.shared)
    func deletingASessionDeletesItsHeldDropsInTheSameWrite(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let other = try harness.secondNode() ?? store
        let window = SessionID("ses_window"), elsewhere = SessionID("ses_elsewhere")
        func held(_ drag: String, _ session: SessionID) -> HeldDrop {
            HeldDrop(session: session, drag: Identifier(drag), event: [
                "drag": .string(drag), "operation": "copy", "items": [["activityType": "panes.document"]],
            ], keptUntil: 9_000)
        }
        try store.apply([.putSession(Fixtures.bareSession(id: window.rawValue)),
                         .putSession(Fixtures.bareSession(id: elsewhere.rawValue))])
        try store.apply([.coordination(.holdDrop(held("drg_a", window), forgetBefore: 0)),
                         .coordination(.holdDrop(held("drg_b", window), forgetBefore: 0)),
                         .coordination(.holdDrop(held("drg_c", elsewhere), forgetBefore: 0))])
        // A batch that fails after the delete keeps them all.
        #expect(throws: (any Error).self) {
            try store.apply([.deleteSession(window), .createDocument(Fixtures.document(id: "d1"), text: ""),
                             .createDocument(Fixtures.document(id: "d1"), text: "")])
        }
        #expect(try other.loadHeldDrops(window, now: 0).map(\.drag) == [Identifier("drg_a"), Identifier("drg_b")])
        try store.apply([.deleteSession(window)])
        #expect(try other.loadHeldDrops(window, now: 0) == [])
        #expect(try other.loadHeldDrops(elsewhere, now: 0).map(\.drag) == [Identifier("drg_c")])
    }

    @Test(arguments: StoreKind.shared)
    func aSessionWriteFromAnOlderCopyIsDroppedAndARecordCommitAtAStaleRevisionConflicts(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let id = SessionID("a1")
        var session = Fixtures.bareSession(id: "a1")
        session.revision = 2
        session.title = "second"
        try store.apply([.putSession(session)])
        let cursor = try store.loadState().recordCursor
        // A write made from an older copy (revision 1, or 2 again) leaves the stored one alone,
        // and is no record change.
        var older = session
        older.title = "from an older copy"
        for revision: Int64 in [1, 2] {
            older.revision = revision
            try store.apply([.putSession(older)])
        }
        #expect(try store.loadState().sessions == [session])
        #expect(try store.loadRecordChanges(after: cursor) == RecordChanges(cursor: cursor))
        // Unversioned writes (revision 0) are always taken.
        var unversioned = session
        unversioned.revision = 0
        try store.apply([.putSession(unversioned)])
        #expect(try store.loadState().sessions == [unversioned])
        try store.apply([.putSession(session)])
        #expect(try store.loadRecordChanges(after: cursor).sessions == [session], "read back with its revision")

        // The record's channel stands at its revision: a commit at another conflicts.
        var third = session
        third.revision = 3
        third.title = "third"
        #expect(try store.apply([Self.commit(1, .coordination(.sessionRecord(id)), base: 1, [.putSession(third)])])
                == [CommitID(1): .conflict])
        #expect(try store.apply([Self.commit(2, .coordination(.sessionRecord(id)), base: 2, [.putSession(third)])])
                == [CommitID(2): .committed])
        #expect(try store.loadState().sessions == [third])
        #expect(try store.apply([Self.commit(3, .coordination(.sessionRecord(SessionID("none"))), base: 0, [])])
                == [CommitID(3): .conflict], "no such session: -1")
    }

    @Test(arguments: StoreKind.shared)
    func aConflictLeavesTheOtherCommitsOfTheBatch(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        defer { withExtendedLifetime(harness) {} }
        let store = harness.shared
        let domain = Fixtures.adaDomain
        let outcomes = try store.apply([
            Self.commit(1, .preferences(domain), base: 0, [.putPreference(domain, keyPath: "a", value: 1, version: 1)]),
            Self.commit(2, .preferences(domain), base: 0, [.putPreference(domain, keyPath: "b", value: 2, version: 1)]),
            Self.commit(3, .document(DocumentID("doc_a1")), base: -1, [.createDocument(Fixtures.document(), text: "")]),
            .persist([.putSession(Fixtures.bareSession())]),
        ])
        #expect(outcomes == [CommitID(1): .committed, CommitID(2): .conflict, CommitID(3): .committed])
        let state = try store.loadState()
        #expect(state.preferences[domain] == StoredPreferences(version: 1, values: ["a": VersionedValue(value: 1, version: 1)]))
        #expect(state.documents == [Fixtures.document()])
        #expect(state.sessions == [Fixtures.bareSession()])
    }
}
