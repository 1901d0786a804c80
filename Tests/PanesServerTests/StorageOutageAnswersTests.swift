import PanesServerTestSupport
import Foundation
import Logging
import PanesCore
import PanesJSON
import PanesServer
import PanesTestSupport
import PanesTransport
import Synchronization
import Testing

/// During a shared store's outage the store thread holds persists and fails commits at once
/// (`storage_failed`: nothing was applied). Such an answer reveals nothing stored, so it does
/// not wait behind other clients' held persists (`Effect.sendUnapplied`); an acknowledgement
/// still waits for its own write.
@Suite(.serialized) struct StorageOutageAnswersTests {
    /// A memory store shared by nodes (so the store thread stalls instead of stopping the
    /// process) whose transactions fail while `failing` is set.
    final class FailingSharedStore: SharedStore, WrappedMemoryStore, @unchecked Sendable {
        let inner = MemoryStore()
        let failing = Atomic<Bool>(false)
        /// Transactions refused so far.
        let refused = Atomic<Int>(0)

        struct Outage: Error, CustomStringConvertible { var description: String { "the database is away (test)" } }

        private func check() throws {
            if failing.load(ordering: .acquiring) {
                refused.add(1, ordering: .relaxed)
                throw Outage()
            }
        }

        func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
            try check()
            return try inner.apply(writes)
        }
        func apply(_ writes: [StoreWrite], resolvingConflicts resolve: (Commit, [StoredOperation]) -> Commit?) throws
            -> [CommitID: CommitOutcome] {
            try check()
            return try inner.apply(writes, resolvingConflicts: resolve)
        }
        func loadRecordChanges(after cursor: Int64) throws -> RecordChanges { try inner.loadRecordChanges(after: cursor) }
        func loadPreferenceChanges(_ domain: PreferenceDomain, after version: Int64) throws -> [PreferenceChange]? {
            try inner.loadPreferenceChanges(domain, after: version)
        }
        func loadOperations(_ id: DocumentID, after revision: Int64) throws -> [StoredOperation]? {
            try inner.loadOperations(id, after: revision)
        }
        func register(node: NodeID, leaseMs: Int) throws -> [NodeID] { try inner.register(node: node, leaseMs: leaseMs) }
        func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] { try inner.heartbeat(node: node, leaseMs: leaseMs) }
        func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] { try inner.checkNodes(node: node, leaseMs: leaseMs) }
        func liveNodes() throws -> [NodeID] { try inner.liveNodes() }
        func fence(as node: NodeID?, leaseMs: Int) { inner.fence(as: node, leaseMs: leaseMs) }
        func reserveRequestKeys(_ keys: [KeyReservation], node: NodeID, staleBefore: Millis) throws
            -> [RequestKeySlot: KeyReservationOutcome] {
            try inner.reserveRequestKeys(keys, node: node, staleBefore: staleBefore)
        }
        func loadRecords(sessions: [SessionID], documents: [DocumentID]) throws -> RecordsRead {
            try inner.loadRecords(sessions: sessions, documents: documents)
        }
        func loadHeldDrops(_ session: SessionID, now: Millis) throws -> [HeldDrop] {
            try check()
            return try inner.loadHeldDrops(session, now: now)
        }
    }

    @Test func aStorageFailedAnswerDoesNotWaitForAnotherClientsHeldWrite() throws {
        let store = FailingSharedStore()
        let server = try DurabilityBarrierTests.InProcessServer(store: store, settings: Settings())
        defer { store.failing.store(false, ordering: .releasing); server.stop() }
        let writer = try server.client()
        _ = writer.connect(name: "alice")
        let editor = try server.client()
        _ = editor.connect(name: "bob")
        let created = editor.request("createDocument", ["title": "Notes"])
        let document = try #require(created["result"]?["document"]?["id"]?.stringValue)
        #expect(editor.request("openDocument", ["document": .string(document)])["ok"] == true)

        // The database goes away while alice's write is on its way: it is held, and so is her ack.
        store.failing.store(true, ordering: .releasing)
        writer.socket.send(#"{"type":"setUserInfo","id":"u1","userInfo":{"sidebar":true}}"#)
        for _ in 0..<200 where store.refused.load(ordering: .relaxed) < 2 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(store.refused.load(ordering: .relaxed) >= 2, "alice's write met the outage")

        // Bob's edit fails at once (nothing applied) and he is told so at once, though alice's
        // write is still held: his answer reveals nothing stored.
        editor.socket.send(JSONCodec.encodeString([
            "type": "edit", "id": "e1", "document": .string(document), "revision": 0, "operation": ["X"], "opId": "b1",
        ]))
        let answer = editor.next(timeout: 1.5) { $0["re"] == "e1" }
        #expect(answer?["error"]?["code"] == "storage_failed", "answered during the outage: \(String(describing: answer))")
        #expect(writer.next(timeout: 0.2) { $0["re"] == "u1" } == nil, "alice's ack waits for her write")

        store.failing.store(false, ordering: .releasing)
        #expect(writer.next(timeout: 10) { $0["re"] == "u1" }?["ok"] == true, "acknowledged once durable")
        let retried = editor.request("edit", ["document": .string(document), "revision": 0, "operation": ["X"], "opId": "b1"])
        #expect(retried["ok"] == true, "the edit applies when retried: \(retried)")
    }
}
