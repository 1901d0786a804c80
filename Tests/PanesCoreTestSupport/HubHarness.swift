@_spi(Testing) package import PanesCore
import Synchronization

/// A clock the test moves by hand.
package final class TestClock: Sendable {
    private let value = Mutex<Millis>(1_700_000_000_000)
    package init() {}
    package var now: Millis { value.withLock { $0 } }
    package func advance(_ milliseconds: Millis) { value.withLock { $0 += milliseconds } }
}

/// Drives a hub the way the runtime does, with exact time and identifiers, and reads the
/// effects back as JSON.
package struct HubHarness {
    package var hub: Hub
    package let clock = TestClock()
    private var nextConnection: UInt64 = 0
    private var nextRequest: Int64 = 0
    /// Every effect so far, for assertions about persistence.
    package var effects: [Effect] = []
    /// Where `.persist` effects are applied as they come out and `.load` effects are read
    /// from, standing in for the runtime's store thread.
    package let store: MemoryStore
    /// When true (the default), loads complete at the end of the event that asked for them,
    /// and their effects are returned with it. When false they wait in `pendingLoads` until
    /// `completeLoads()`, so a test can act while a document is loading.
    package var completesLoads = true
    package private(set) var pendingLoads: [LoadRequest] = []
    /// When true (the default), channel commits are applied to the store and their outcome
    /// fed back at the end of the event that made them, as a store thread that is never slow
    /// would. When false they wait in `pendingCommits` until `completeCommits()`, so a test can
    /// act while a commit is in flight (a slow disk).
    package var completesCommits = true
    package private(set) var pendingCommits: [Commit] = []
    /// When true (the default), node checks (`Effect.checkNodes`) are answered from the store
    /// at the end of the event that asked, as a heartbeat thread that is never slow would.
    /// When false they wait in `pendingChecks` until `completeChecks()`.
    package var completesChecks = true
    package private(set) var pendingChecks = 0
    /// Every commit the store took, in order: with several nodes on one store, the history.
    package private(set) var committed: [Commit] = []
    /// What the store said of keyed persists (`recordKeyedRequest`), to hand back as the
    /// runtime does.
    private var pendingReports: [(CommitID, CommitOutcome)] = []
    /// When true, persists are kept in `heldPersists` instead of applied, as a store thread
    /// that cannot reach its database holds them, until `releasePersists()`.
    package var holdsPersists = false
    package private(set) var heldPersists: [[StoreCommand]] = []

    package init(settings: Settings = Settings(), configurations: [SceneConfiguration] = SceneConfiguration.defaults,
         authenticator: Authenticator = .open(), stored: StoredState = StoredState(), store: MemoryStore = MemoryStore(),
         managedPreferences: ManagedPreferences = ManagedPreferences(), startingAt: Millis? = nil,
         node: NodeID? = nil, ids: IdentifierSource = .sequential(), webhookEndpoints: [WebhookEndpoint] = []) {
        let clock = clock
        if let startingAt { clock.advance(startingAt - clock.now) }
        self.store = store
        // The store's link secret, as a server loads it with the rest (a test's `stored` is often
        // made by hand).
        var stored = stored
        if stored.linkSecret.isEmpty { stored.linkSecret = (try? store.loadState().linkSecret) ?? [] }
        hub = Hub(settings: settings, configurations: configurations, authenticator: authenticator,
                  secretHasher: .reversed, stored: stored, managedPreferences: managedPreferences,
                  serverVersion: "test", node: node, webhookEndpoints: webhookEndpoints, now: { clock.now }, ids: ids)
    }

    /// A harness for a restarted server: a new hub over the same store, loaded from it.
    /// - Parameter ids: where the new hub's identifiers start; give one past the old hub's when
    ///   the test makes sessions after the restart, so they cannot take an old one's id.
    package func restarted(settings: Settings? = nil, ids: IdentifierSource = .sequential()) throws -> HubHarness {
        HubHarness(settings: settings ?? hub.settings, configurations: hub.configurations,
                   authenticator: hub.authenticator, stored: try store.loadState(), store: store, startingAt: clock.now,
                   ids: ids)
    }

    /// Runs the hub's start-up work, as the runtime does once after loading.
    package mutating func start() -> [Effect] {
        perform(hub.start())
    }

    /// - Parameter peer: the address it comes from (nil: unknown, as most tests leave it).
    package mutating func open(peer: String? = nil) -> ConnectionID {
        nextConnection += 1
        let connection = ConnectionID(nextConnection)
        run(.opened(connection, peer: peer))
        return connection
    }

    @discardableResult
    package mutating func run(_ event: HubEvent) -> [Effect] {
        perform(hub.handle(event)) + settle()
    }

    /// Completes what the settings say completes at once (loads, commits, checks, keyed
    /// persists' reports) until nothing of that is left; returns what the hub produced meanwhile.
    package mutating func settle() -> [Effect] {
        var produced: [Effect] = []
        while (completesLoads && !pendingLoads.isEmpty) || (completesCommits && !pendingCommits.isEmpty)
                || (completesChecks && pendingChecks > 0) || !pendingReports.isEmpty {
            if !pendingReports.isEmpty {
                let (id, outcome) = pendingReports.removeFirst()
                produced += perform(hub.handle(.committed(id, outcome)))
            } else if completesChecks, pendingChecks > 0 {
                produced += completeChecks()
            } else if completesCommits, !pendingCommits.isEmpty {
                produced += completeCommits()
            } else {
                produced += perform(hub.handle(.loaded(store.perform(pendingLoads.removeFirst()))))
            }
        }
        return produced
    }

    /// Applies every waiting commit to the store, in order, and feeds back each outcome;
    /// returns what the hub produced.
    @discardableResult
    package mutating func completeCommits(_ outcome: CommitOutcome? = nil) -> [Effect] {
        var produced: [Effect] = []
        while !pendingCommits.isEmpty || (completesLoads && !pendingLoads.isEmpty) {
            if pendingCommits.isEmpty {
                produced += perform(hub.handle(.loaded(store.perform(pendingLoads.removeFirst()))))
                continue
            }
            let commit = pendingCommits.removeFirst()
            var result = outcome ?? .committed
            if outcome == nil {
                var found: [SessionID] = []
                do {
                    let applied = try store.apply([.commit(commit)], resolvingConflicts: { _, _ in nil })
                    (result, found) = (applied.outcomes[commit.id] ?? .failed("no outcome"), applied.heldDropsFound)
                } catch {
                    Issue.record("the store refused a commit: \(error)")
                }
                if result == .committed { committed.append(commit) }
                // What its claim found, before its outcome, as the runtime hands them in.
                if !found.isEmpty { produced += perform(hub.handle(.heldDropsFound(found))) }
            }
            produced += perform(hub.handle(.committed(commit.id, result)))
        }
        return produced
    }

    /// Answers every waiting node check from the store (or with `nil`: it could not be asked);
    /// returns what the hub produced.
    @discardableResult
    package mutating func completeChecks(failing: Bool = false) -> [Effect] {
        var produced: [Effect] = []
        while pendingChecks > 0 {
            pendingChecks -= 1
            var gone: [NodeID]?
            if !failing, let node = hub.node {
                do { gone = try store.checkNodes(node: node, leaseMs: hub.settings.nodeLeaseMs) } catch { Issue.record("node check failed: \(error)") }
            }
            produced += perform(hub.handle(.notice(.nodesChecked(gone))))
        }
        return produced + settle()
    }

    /// Answers every waiting load with a failure (the store was unreachable), in order;
    /// returns what the hub produced.
    @discardableResult
    package mutating func failLoads(_ reason: String) -> [Effect] {
        var produced: [Effect] = []
        while !pendingLoads.isEmpty {
            let failed: LoadResult = switch pendingLoads.removeFirst() {
            case .document(let id, _): .document(id, nil, failure: reason)
            case .preferences(let domain): .preferences(domain, nil, failure: reason)
            case .preferenceChanges(let domain, _): .preferenceChanges(domain, nil, failure: reason)
            case .operations(let id, _): .operations(id, nil, failure: reason)
            case .recordChanges: .recordChanges(nil, failure: reason)
            case .reserveRequestKeys(let keys, _, _): .requestKeysReserved(keys, [:], failure: reason)
            case .records(let sessions, let documents): .records(sessions: sessions, documents: documents, nil, failure: reason)
            case .requestRecords(let slots): .requestRecords(slots, [], failure: reason)
            case .versions(let read): .versions(read, nil, failure: reason)
            case .heldDrops(let session, _): .heldDrops(session, [], failure: reason)
            }
            produced += perform(hub.handle(.loaded(failed)))
        }
        return produced
    }

    /// Completes every waiting load, in order; returns what the hub produced.
    @discardableResult
    package mutating func completeLoads() -> [Effect] {
        var produced: [Effect] = []
        while !pendingLoads.isEmpty {
            produced += perform(hub.handle(.loaded(store.perform(pendingLoads.removeFirst()))))
        }
        return produced
    }

    /// Does what the runtime does with the store effects: applies persists in order and queues loads.
    private mutating func perform(_ produced: [Effect]) -> [Effect] {
        effects += produced
        for effect in produced {
            switch effect {
            case .persist(let commands), .persistQuietly(let commands):
                if holdsPersists {
                    heldPersists.append(commands)
                } else {
                    applyPersist(commands)
                }
            case .commit(let commit):
                pendingCommits.append(commit)
            case .load(let request):
                pendingLoads.append(request)
            case .checkNodes:
                pendingChecks += 1
            default:
                break
            }
        }
        return produced
    }

    private mutating func applyPersist(_ commands: [StoreCommand]) {
        do {
            let outcomes = try store.apply([StoreWrite.persist(commands)])
            for report in commands.compactMap(\.keyedReport) {
                pendingReports.append((report, outcomes[report] ?? .failed("no outcome")))
            }
        } catch { Issue.record("the store refused a batch: \(error)") }
    }

    /// Applies the held persists (the database is back) and returns what the hub produced.
    @discardableResult
    package mutating func releasePersists() -> [Effect] {
        holdsPersists = false
        for commands in heldPersists { applyPersist(commands) }
        heldPersists = []
        return run(.tick)
    }

    /// Sends a request (adding an `id` if missing) and returns everything the hub produced.
    @discardableResult
    package mutating func send(_ connection: ConnectionID, _ type: String, _ fields: JSONObject = [:]) -> [Effect] {
        nextRequest += 1
        var object = fields
        object["type"] = .string(type)
        if object["id"] == nil { object["id"] = .int(nextRequest) }
        return run(.received(connection, .object(object)))
    }

    /// Sends a request and returns its reply (`ok`, `result` / `error`).
    package mutating func request(_ connection: ConnectionID, _ type: String, _ fields: JSONObject = [:]) -> JSONValue {
        let produced = send(connection, type, fields)
        guard let reply = produced.messages(to: connection).last(where: { $0["type"] == "reply" }) else {
            Issue.record("no reply to \(type)")
            return .null
        }
        return reply
    }

    /// Opens a connection and connects it as a scene; returns the connection and the result.
    package mutating func connect(_ fields: JSONObject = [:], name: String = "alice") -> (ConnectionID, JSONValue) {
        let connection = open()
        var object: JSONObject = ["protocol": 1, "auth": ["name": .string(name)]]
        object.merge(fields) { _, new in new }
        let reply = request(connection, "connect", object)
        #expect(reply["ok"] == true, "connect failed: \(reply)")
        return (connection, reply["result"] ?? .null)
    }

    package static func credentials(_ result: JSONValue) -> JSONValue {
        ["id": result["session"]?["persistentIdentifier"] ?? .null, "secret": result["session"]?["secret"] ?? .null]
    }
}

import Testing

extension SecretHasher {
    /// A stand-in for SHA-256 in core tests: visibly not the secret, and cheap. The real one is
    /// tested in PanesSecurityTests.
    /// Its digest and `mac` are no hashes at all, only functions of their inputs (FNV-1a spread
    /// over 32 bytes; the digest's of the reversed secret), enough to tell secrets apart.
    package static let reversed = SecretHasher(
        digest: { SecretHash(bytes: spread(Array(String($0.reversed()).utf8)))! },
        hash: { "hash:" + String($0.reversed()) },
        mac: { key, message in spread(key + message) })

    /// FNV-1a over `bytes` and a round number, once for each of 32 bytes.
    private static func spread(_ bytes: [UInt8]) -> [UInt8] {
        var state: UInt64 = 0xcbf2_9ce4_8422_2325
        return (0..<32).map { round in
            for byte in bytes + [UInt8(round)] { state = (state ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }
}

extension Array where Element == Effect {
    /// Messages (replies and events) sent to one connection, in order, as JSON.
    package func messages(to connection: ConnectionID) -> [JSONValue] {
        compactMap { effect in
            switch effect {
            case .send(let message, let target) where target == connection: message.json
            case .sendNow(let message, let target) where target == connection: message.json
            case .sendUnapplied(let message, let target) where target == connection: message.json
            case .broadcast(let message, let targets) where targets.contains(connection): message.json
            default: nil
            }
        }
    }

    package func events(to connection: ConnectionID, named name: String) -> [JSONValue] {
        messages(to: connection).filter { $0["type"] == .string(name) }
    }

    /// Every command the effects store: persists and channel commits.
    package var persisted: [StoreCommand] {
        flatMap { effect -> [StoreCommand] in
            switch effect {
            case .persist(let commands), .persistQuietly(let commands): commands
            case .commit(let commit): commit.commands
            default: []
            }
        }
    }

    package func closes(_ connection: ConnectionID) -> [CloseCode] {
        compactMap { effect in
            if case .close(let target, let code, _) = effect, target == connection { code } else { nil }
        }
    }

    package var probes: [ConnectionID] {
        compactMap { effect in if case .probe(let target) = effect { target } else { nil } }
    }
}

// MARK: Documents

extension HubHarness {
    /// Creates a document from the scene and returns its id.
    package mutating func createDocument(_ connection: ConnectionID, title: String = "Plan", text: String = "") -> String {
        let reply = request(connection, "createDocument", ["title": .string(title), "text": .string(text)])
        #expect(reply["ok"] == true, "createDocument failed: \(reply)")
        return reply["result"]?["document"]?["id"]?.stringValue ?? ""
    }

    /// Opens a document (completing its load) and returns the reply.
    package mutating func openDocument(_ connection: ConnectionID, _ document: String, revision: Int64? = nil) -> JSONValue {
        var fields: JSONObject = ["document": .string(document)]
        if let revision { fields["revision"] = .int(revision) }
        return request(connection, "openDocument", fields)
    }

    /// Sends an edit and returns the reply.
    package mutating func edit(_ connection: ConnectionID, _ document: String, revision: Int64, _ operation: JSONValue,
                       opId: String) -> JSONValue {
        request(connection, "edit", ["document": .string(document), "revision": .int(revision),
                                     "operation": operation, "opId": .string(opId)])
    }

    /// The document's text as stored: the snapshot with the logged operations after it applied.
    /// Persists reach the store as they are emitted, so this is also what a restart would see.
    package func text(of document: String) -> String? {
        rope(of: document).map(String.init)
    }

    /// `text(of:)` as a rope: replaying the log costs O(log n) per operation, not the whole text.
    package func rope(of document: String) -> Rope? {
        guard let stored = try? store.loadDocument(DocumentID(document), retention: 0) else { return nil }
        var text = Rope(stored.snapshotText)
        for entry in stored.operations where entry.revision > stored.snapshotRevision {
            guard let next = try? entry.operation.apply(to: text) else { return nil }
            text = next
        }
        return text
    }
}

extension JSONValue {
    /// The `error.code` of a failed reply.
    package var errorCode: String? { self["error"]?["code"]?.stringValue }
}
