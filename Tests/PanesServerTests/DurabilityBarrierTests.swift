import Foundation
import Logging
import PanesCore
import PanesJSON
import PanesSecurity
import PanesServer
import PanesServerTestSupport
import PanesTestSupport
import PanesTransport
import Synchronization
import Testing

/// The runtime's promise under a slow disk, with the server in this process over a store
/// whose commits block until the test lets them through: nothing that reports a write leaves
/// before the write is durable, and nothing about liveness waits for the disk.
@Suite(.serialized) struct DurabilityBarrierTests {
    /// A memory store whose `apply` waits while the gate is closed.
    final class GatedStore: WrappedMemoryStore, @unchecked Sendable {
        let inner = MemoryStore()
        private let gate = NSCondition()
        private var closed = false
        /// How many applies are waiting at the gate now.
        private var waiting = 0

        func close() { gate.lock(); closed = true; gate.unlock() }
        func open() { gate.lock(); closed = false; gate.broadcast(); gate.unlock() }

        /// Waits until a write is held at the gate.
        func waitForHeldWrite(timeout: Double = 10) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            gate.lock()
            defer { gate.unlock() }
            while waiting == 0 {
                if !gate.wait(until: deadline) { return false }
            }
            return true
        }

        func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
            gate.lock()
            waiting += 1
            gate.broadcast()
            while closed { gate.wait() }
            waiting -= 1
            gate.unlock()
            return try inner.apply(writes)
        }
    }

    /// A server in this process on a free port, serving until `stop()`.
    final class InProcessServer: @unchecked Sendable {
        let runtime: ServerRuntime
        private let thread: Thread
        private let done = DispatchSemaphore(value: 0)

        init(store: any Store, settings: Settings, authenticator: Authenticator = .open()) throws {
            var configuration = ServerConfiguration()
            configuration.settings = settings
            runtime = ServerRuntime(
                configuration: configuration, transport: TransportConfiguration(host: "127.0.0.1", port: 0),
                store: store, authenticator: authenticator,
                secretHasher: .sha256, serverVersion: "test",
                logger: Logger(label: "test"))
            try runtime.start()
            let runtime = runtime, done = done
            thread = Thread { _ = runtime.run(); done.signal() }
            thread.start()
        }

        var port: Int { runtime.transport.port }

        func client() throws -> TestClient {
            try TestClient(WebSocketClient(port: port))
        }

        func stop() {
            runtime.transport.stop()
            done.wait()
        }
    }

    /// A memory store that notes, under a lock, every session liveness its writes put.
    final class LivenessNotingStore: WrappedMemoryStore, @unchecked Sendable {
        let inner = MemoryStore()
        private let put = Mutex<[SessionLiveness]>([])

        func apply(_ writes: [StoreWrite]) throws -> [CommitID: CommitOutcome] {
            let outcome = try inner.apply(writes)
            let liveness = writes.flatMap { write -> [SessionLiveness] in
                guard case .persist(let commands) = write else { return [] }
                return commands.compactMap { if case .putSessionLiveness(let liveness) = $0 { liveness } else { nil } }
            }
            put.withLock { $0 += liveness }
            return outcome
        }

        /// Waits until a liveness of `session` satisfying `test` was written.
        func waitForLiveness(of session: SessionID, timeout: Double = 10, _ test: (SessionLiveness) -> Bool) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while Date() < deadline {
                if put.withLock({ $0.contains { $0.id == session && test($0) } }) { return true }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return false
        }
    }

    /// A resume writes only its liveness, quietly, kept in the worker's outbox until the loop
    /// turn ends, then handed to the store thread (`serverWillWait`). Were that hand-over gone,
    /// a server doing nothing but resumes would keep every resume's `liveSince` until some
    /// durable write or shutdown, and a SIGKILL would lose them (`lastActiveAt` would lie).
    @Test func aResumesLivenessReachesTheStoreWithNoOtherWriteAfterIt() throws {
        let store = LivenessNotingStore()
        let server = try InProcessServer(store: store, settings: Settings())
        defer { server.stop() }
        let first = try server.client()
        let created = first.connect()
        let session = SessionID(created["session"]?["persistentIdentifier"]?.stringValue ?? "")
        first.socket.close()
        // The close's write (not a quiet one): no window live on the session.
        #expect(store.waitForLiveness(of: session) { $0.liveSince == nil }, "the close was written")

        let again = try server.client()
        #expect(again.connect(["session": TestClient.credentials(created)])["created"] == false)
        // Nothing else is written: the resume's own liveness reaches the store.
        #expect(store.waitForLiveness(of: session) { $0.liveSince != nil }, "the resume's liveness was handed to the store")
        withExtendedLifetime(again) {}
    }

    @Test func anAckAndTheNotificationsWaitForTheCommitWhileLivenessDoesNot() throws {
        var settings = Settings()
        settings.livenessProbeTimeoutMs = 300
        let store = GatedStore()
        let server = try InProcessServer(store: store, settings: settings)
        defer { store.open(); server.stop() }

        let writer = try server.client()
        let written = writer.connect()
        let observer = try server.client()
        _ = observer.connect()
        #expect(observer.request("observe", ["domain": "user", "keyPath": "editor.fontSize"])["ok"] == true)

        // The disk stalls.
        store.close()
        // Both kinds of write: a session's (persisted at once, everything after it held) and a
        // preference's (a channel commit, applied only when committed).
        writer.socket.send(#"{"type":"setUserInfo","id":"u1","userInfo":{"sidebar":true}}"#)
        writer.socket.send(#"{"type":"setPreference","id":"w1","domain":"user","keyPath":"editor.fontSize","value":22}"#)
        #expect(store.waitForHeldWrite(), "the writes reached the store")

        // Liveness does not wait: a ping is answered, and a duplicated tab's probe reaches the
        // live tab, which answers it, so the duplicate forks instead of taking the session over.
        #expect(writer.request("ping", timeout: 5)["ok"] == true, "a ping is answered while the disk is stalled")
        let duplicate = try server.client()
        duplicate.socket.send(JSONCodec.encodeString([
            "type": "connect", "id": "d1", "protocol": 1, "auth": ["name": "alice"],
            "session": TestClient.credentials(written),
        ]))
        // Longer than the probe timeout: were the probe held behind the disk, the live tab
        // could not answer in time and its session would be handed to the duplicate.
        Thread.sleep(forTimeInterval: 1.0)
        #expect(writer.next(timeout: 0.2) { $0["re"] == "w1" || $0["re"] == "u1" } == nil, "no ack before the commit")
        #expect(observer.event("preferenceChanged", timeout: 0.2) == nil, "no notification before the commit")

        store.open()
        #expect(writer.next(timeout: 10) { $0["re"] == "u1" }?["ok"] == true)
        #expect(writer.next(timeout: 10) { $0["re"] == "w1" }?["ok"] == true)
        #expect(observer.event("preferenceChanged")?["new"] == 22)
        let duplicateReply = duplicate.next(timeout: 10) { $0["re"] == "d1" }
        #expect(duplicateReply?["result"]?["forkedFrom"] == written["session"]?["persistentIdentifier"],
                "the duplicate forked: the live tab answered its probe during the stall")
        #expect(writer.request("ping")["ok"] == true, "the original tab still has its session")
        #expect(writer.closeCode == nil)
    }

    @Test func aClientWritingFasterThanTheDiskIsNotReadFromUntilItsAnswersDrain() throws {
        var settings = Settings()
        settings.maxHeldPerConnection = 16
        let store = GatedStore()
        let server = try InProcessServer(store: store, settings: settings)
        defer { store.open(); server.stop() }
        let writer = try server.client()
        _ = writer.connect()
        func gauge(_ name: String) throws -> Double? {
            try PrometheusParser(ServerProcess.http(port: server.port, "/metrics").body).values(name).first
        }

        store.close()
        for index in 0..<40 {
            writer.socket.send(#"{"type":"setUserInfo","id":\#(index),"userInfo":{"n":\#(index)}}"#)
        }
        #expect(store.waitForHeldWrite())
        var paused = false
        for _ in 0..<100 where !paused {
            paused = try gauge("panes_connections_paused") == 1
            if !paused { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(paused, "the connection is no longer read once 16 answers are held")
        let held = try gauge("panes_held_messages") ?? 0
        #expect(held < 40, "what was not read is not held: \(held)")

        store.open()
        var answered: [Int64] = []
        for index in 0..<40 {
            let reply = writer.next(timeout: 10) { $0["re"] == .int(Int64(index)) }
            if reply?["ok"] == true { answered.append(Int64(index)) }
        }
        #expect(answered.count == 40, "every write answered once reading resumed")
        #expect(try gauge("panes_connections_paused") == 0)
    }
}
