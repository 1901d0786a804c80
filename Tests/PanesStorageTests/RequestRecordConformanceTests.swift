import PanesCore
import PanesStorageTestSupport
import Testing

/// Outcomes of keyed requests (`StoreCommand.recordRequest`), on every store: kept with the
/// change they report, found by their exact bytes, recorded once.
@Suite struct RequestRecordConformanceTests {
    static func record(_ key: String, user: String = "zoë", at: Millis = 1_700_000_000_000,
                       result: JSONValue = ["document": ["id": "doc_1", "title": "Plan ✍️ \"Q3\""]]) -> RequestRecord {
        RequestRecord(slot: RequestKeySlot(owner: OwnerKey(workspace: "acme", user: user), key: RequestKey(key)),
                      fingerprint: "createDocument:40:0123456789abcdef", result: result, at: at)
    }

    @Test(arguments: StoreKind.tested)
    func recordsRoundTripByTheirExactBytes(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let composed = Self.record("caf\u{E9}", at: 1)
        let decomposed = Self.record("cafe\u{301}", at: 2, result: ["version": 3, "changed": true])
        let odd = Self.record("nul\u{0}and 🪟 \"quotes\"", at: 3, result: [:])
        let bob = Self.record("caf\u{E9}", user: "bob", at: 4)
        try store.apply([.recordRequest(composed), .recordRequest(decomposed), .recordRequest(odd), .recordRequest(bob)])

        #expect(try store.reloaded().requestRecords == [composed, decomposed, odd, bob])
        #expect(try store.store.loadRequestRecords([decomposed.slot]) == [decomposed])
        #expect(try store.store.loadRequestRecords([odd.slot, Self.record("absent").slot]) == [odd])
    }

    /// A single node's hub holds every record it wrote: a key it records again is one it
    /// forgot, whose stale record is replaced.
    @Test(arguments: StoreKind.tested)
    func aKeyRecordedAgainOnOneNodeReplacesItsStaleRecord(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        try store.apply([.recordRequest(Self.record("k1", at: 1))])
        let again = Self.record("k1", at: 2, result: ["document": ["id": "doc_2"]])
        try store.apply([.createDocument(Fixtures.document(id: "doc_2"), text: "b"), .recordRequest(again)])
        let state = try store.reloaded()
        #expect(state.requestRecords == [again])
        #expect(state.documents.map(\.id.rawValue) == ["doc_2"])
    }

    /// On shared stores a cluster node's record is written once: the same request applied again
    /// (a retry through another node, a held write) is left out whole, and says so.
    @Test(arguments: StoreKind.shared)
    func aPersistRecordingAKeyAlreadyRecordedIsLeftOutWhole(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let node = NodeID("node-a")
        let first = Self.record("k1")
        _ = try store.store.apply([.persist([.createDocument(Fixtures.document(id: "doc_1"), text: "a"),
                                             .coordination(.recordKeyedRequest(first, node: node, report: CommitID(1)))])])
        let again = Self.record("k1", at: 1_700_000_000_999, result: ["document": ["id": "doc_2"]])
        let outcomes = try store.store.apply([
            .persist([.createDocument(Fixtures.document(id: "doc_2"), text: "b"),
                      .coordination(.recordKeyedRequest(again, node: NodeID("node-b"), report: CommitID(2)))]),
            .persist([.putSession(Fixtures.bareSession(id: "s1"))]),
        ])
        #expect(outcomes[CommitID(2)] == .recorded([first]))
        let state = try store.reloaded()
        #expect(state.documents.map(\.id.rawValue) == ["doc_1"], "the second document was left out")
        #expect(state.sessions.map(\.id.rawValue) == ["s1"], "and nothing else of the batch")
        #expect(state.requestRecords == [first], "the first record stands")
    }

    @Test(arguments: StoreKind.shared)
    func aCommitRecordingAKeyAlreadyRecordedIsRefusedWithTheRecord(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let domain = Fixtures.adaDomain
        let node = NodeID("node-a")
        let recorded = Self.record("p1", user: "ada", result: ["version": 1, "changed": true])
        let commit = Commit(id: CommitID(1), channel: .preferences(domain), base: 0, commands: [
            .putPreference(domain, keyPath: "k", value: 1, version: 1), .coordination(.recordKeyedRequest(recorded, node: node, report: nil))])
        #expect(try store.store.apply([.commit(commit)])[CommitID(1)] == .committed)
        // A retry of it, made on version 1 or on the version it was made on: refused, with the record.
        for base: Int64 in [0, 1] {
            let retry = Commit(id: CommitID(2), channel: .preferences(domain), base: base, commands: [
                .putPreference(domain, keyPath: "k", value: 1, version: base + 1),
                .coordination(.recordKeyedRequest(Self.record("p1", user: "ada", at: 5), node: NodeID("node-b"), report: nil))])
            #expect(try store.store.apply([.commit(retry)])[CommitID(2)] == .recorded([recorded]))
        }
        #expect(try store.reloaded().preferences[domain]?.version == 1)
    }

    @Test(arguments: StoreKind.tested)
    func forgettingARecordLeavesOneRecordedAnewAndPruningKeepsTheNewest(_ kind: StoreKind) throws {
        let store = try StoreHarness(kind)
        let old = Self.record("a", at: 10)
        try store.apply([.recordRequest(old), .recordRequest(Self.record("b", at: 20)),
                         .recordRequest(Self.record("c", at: 30)), .recordRequest(Self.record("d", user: "bob", at: 5))])
        // Forgotten as recorded at 10, while it was recorded anew at 40 (a new request): stays.
        try store.apply([.forgetRequestRecords([RecordedKey(slot: old.slot, at: 10)])])
        let renewed = Self.record("a", at: 40)
        try store.apply([.recordRequest(renewed)])
        try store.apply([.forgetRequestRecords([RecordedKey(slot: old.slot, at: 10)])])
        #expect(try store.reloaded().requestRecords.map(\.at) == [5, 20, 30, 40])
        // Older than 6 go, and beyond each user's newest two.
        try store.apply([.pruneRequestRecords(before: 6, keepPerUser: 2)])
        #expect(try store.reloaded().requestRecords.map(\.at) == [30, 40])
    }

    // MARK: Reservations (shared stores)

    /// A node reserves a key before it handles a request it does not know: free, it is its
    /// own; recorded, it gets the record; held by another live node, it is told so; held by a
    /// node whose lease ran out, it takes it over.
    @Test(arguments: StoreKind.shared)
    func aKeyIsReservedByOneLiveNodeAtATime(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.shared
        let (a, b, dead) = (NodeID("node-a"), NodeID("node-b"), NodeID("node-dead"))
        // Each node registers through a store of its own, as nodes do: a PostgreSQL store holds
        // one identity's liveness lock on its connection and closes it when another registers
        // through it (`adopt`), so three identities through one store would leave a and b dead.
        let (nodeA, nodeDead) = (try harness.secondNode() ?? store, try harness.secondNode() ?? store)
        _ = try nodeA.register(node: a, leaseMs: 60_000)
        _ = try store.register(node: b, leaseMs: 60_000)
        _ = try nodeDead.register(node: dead, leaseMs: -1_000)
        let free = KeyReservation(slot: Self.record("free").slot, fingerprint: "f", at: 1)
        let byDead = KeyReservation(slot: Self.record("dead").slot, fingerprint: "f", at: 1)
        #expect(try store.reserveRequestKeys([free], node: a, staleBefore: 0) == [free.slot: .reserved])
        #expect(try store.reserveRequestKeys([free], node: a, staleBefore: 0) == [free.slot: .reserved], "its own already")
        #expect(try store.reserveRequestKeys([free], node: b, staleBefore: 0) == [free.slot: .reservedElsewhere(a)])
        #expect(try store.reserveRequestKeys([byDead], node: dead, staleBefore: 0) == [byDead.slot: .reserved])
        #expect(try store.reserveRequestKeys([byDead], node: b, staleBefore: 0) == [byDead.slot: .reserved], "taken over from a dead node")
        // One older than `staleBefore` is taken over whoever holds it.
        let old = KeyReservation(slot: Self.record("old").slot, fingerprint: "f", at: 5)
        #expect(try store.reserveRequestKeys([old], node: a, staleBefore: 0) == [old.slot: .reserved])
        #expect(try store.reserveRequestKeys([old], node: b, staleBefore: 6) == [old.slot: .reserved], "stale")
        let recorded = Self.record("done")
        try harness.apply([.recordRequest(recorded)])
        let done = KeyReservation(slot: recorded.slot, fingerprint: "f", at: 2)
        #expect(try store.reserveRequestKeys([done], node: b, staleBefore: 0) == [done.slot: .recorded(recorded)])
        // Given up, it is free for anyone.
        try harness.apply([.coordination(.releaseRequestKey(free.slot, node: a))])
        #expect(try store.reserveRequestKeys([free], node: b, staleBefore: 0) == [free.slot: .reserved])
        #expect(try store.loadState().requestRecords == [recorded], "reservations are not records")
    }

    /// The write a held attempt of a request makes, once another node reserved its key (a
    /// retry through that node), is left out whole and says so; the reserving node's own write
    /// goes in over its reservation.
    @Test(arguments: StoreKind.shared)
    func aHeldAttemptLosesToTheNodeThatReservedItsKey(_ kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.shared
        let (a, b) = (NodeID("node-a"), NodeID("node-b"))
        _ = try store.register(node: b, leaseMs: 60_000)
        let key = Self.record("k")
        #expect(try store.reserveRequestKeys([KeyReservation(slot: key.slot, fingerprint: key.fingerprint, at: 1)], node: b, staleBefore: 0)
                    == [key.slot: .reserved])
        // a held this attempt while it was cut off; it comes now.
        let held = try store.apply([.persist([.createDocument(Fixtures.document(id: "doc_a"), text: ""),
                                              .coordination(.recordKeyedRequest(key, node: a, report: CommitID(1)))])])
        #expect(held[CommitID(1)] == .recorded([]))
        let own = RequestRecord(slot: key.slot, fingerprint: key.fingerprint, result: ["document": ["id": "doc_b"]], at: 2)
        let mine = try store.apply([.persist([.createDocument(Fixtures.document(id: "doc_b"), text: ""),
                                              .coordination(.recordKeyedRequest(own, node: b, report: CommitID(2)))])])
        #expect(mine[CommitID(2)] == .committed)
        // Now recorded: a's attempt again is left out, with the record.
        let again = try store.apply([.persist([.createDocument(Fixtures.document(id: "doc_c"), text: ""),
                                               .coordination(.recordKeyedRequest(key, node: a, report: CommitID(3)))])])
        #expect(again[CommitID(3)] == .recorded([own]))
        let state = try harness.reloaded()
        #expect(state.documents.map(\.id.rawValue) == ["doc_b"])
        #expect(state.requestRecords == [own])
        let read = try store.loadRecords(sessions: [SessionID("gone")], documents: [DocumentID("doc_a"), DocumentID("doc_b")])
        #expect(read.missingDocuments == [DocumentID("doc_a")] && read.documents.keys.map(\.rawValue) == ["doc_b"])
        #expect(read.missingSessions == [SessionID("gone")])
    }
}
