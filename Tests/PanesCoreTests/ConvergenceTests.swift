@_spi(Testing) import PanesCore
import PanesCoreTestSupport
import Testing

/// The convergence proof: several simulated clients, each running the browser's OT client
/// state machine (`OTClient` below mirrors `web/lib/ot-client.js`), edit one document through
/// the real `Hub` with every delivery order chosen at random: messages sit in each direction
/// of each connection until the dice deliver them, loads complete whenever, connections drop
/// mid-stream (losing whatever was in flight) and come back to catch up and resend, tabs
/// reload and start over, documents are closed, evicted and reopened; on half the seeds a
/// commit's outcome also comes back whenever the dice say (a slow disk), so all of that
/// happens while edits are in flight to the store. Edits use astral-plane
/// characters, combining marks and ZWJ sequences, and delete across each other's inserts.
///
/// After every seed: all clients, the server and the store hold the same text; every
/// acknowledged operation is in the server's history exactly where its acknowledgement said;
/// no operation was applied more often than it was sent; the stored log replays to the text;
/// a client with the document open is sent every operation once, in order (gaps and repeats
/// happen only around its own re-open, where the browser's rules below handle them).
@Suite struct ConvergenceTests {
    static let seeds: [UInt64] = Array(1...200)

    @Test(arguments: seeds)
    func everyClientConvergesOnTheServersText(seed: UInt64) throws {
        var simulation = Simulation(seed: seed)
        try simulation.run(steps: 2_000)
        try simulation.settle()
        try simulation.check()
    }

    /// The random schedule is only a proof if it reaches the hard paths: catch-ups of every
    /// kind in both resend orders, duplicates, own operations coming back in a catch-up,
    /// refused stale edits, loads after eviction and opIds reused after a reload.
    @Test func theScheduleReachesEveryPath() throws {
        var seen: Set<String> = []
        for seed in Self.seeds.prefix(40) {
            for (snapshotEvery, retention) in [(nil, nil), (2, 1)] as [(Int?, Int?)] {
                var simulation = Simulation(seed: seed, snapshotEvery: snapshotEvery, retention: retention)
                try simulation.run(steps: 400)
                try simulation.settle()
                try simulation.check()
                seen.formUnion(simulation.clients.flatMap { $0.seen })
                seen.formUnion(simulation.seen)
            }
        }
        for path in ["catchUp fresh", "catchUp none", "catchUp operations", "catchUp operations, resend first",
                     "catchUp snapshot", "duplicate reply", "own operation in catch-up", "edit revision_unavailable",
                     "load after eviction"] {
            #expect(seen.contains(path), "never reached: \(path)")
        }
    }

    /// The paths only several nodes take: an acknowledgement after a gap (the client closed
    /// the document while its edit waited for the other node's operations), an operation seen
    /// twice around a re-open, and scenes closed by a node that fell behind the kept log.
    @Test func theTwoNodeScheduleReachesItsPaths() throws {
        var seen: Set<String> = []
        for seed in Self.seeds {
            var simulation = Simulation(seed: seed &+ 60_000, retention: 5, nodes: 2, slowCommits: true)
            try simulation.run(steps: 1_000)
            try simulation.settle()
            try simulation.check()
            seen.formUnion(simulation.clients.flatMap { $0.seen })
            seen.formUnion(simulation.seen)
        }
        for path in ["ack after a gap", "operation seen already", "closed by the server", "catchUp snapshot"] {
            #expect(seen.contains(path), "never reached: \(path)")
        }
    }

    /// Small logs and frequent snapshots, so reconnecting clients often get `snapshot`
    /// catch-ups and in-flight edits get `revision_unavailable`.
    @Test(arguments: Array(seeds.prefix(60)))
    func convergenceHoldsWithATinyOperationLog(seed: UInt64) throws {
        var simulation = Simulation(seed: seed &+ 10_000, snapshotEvery: 2, retention: 1)
        try simulation.run(steps: 400)
        try simulation.settle()
        try simulation.check()
    }

    /// The same schedule with the clients spread over two nodes on one shared store: each
    /// (re)connect picks a node at random, so reloads land on the other node; what one node
    /// writes reaches the other only through the notices, delivered whenever the dice say.
    ///
    /// It found: a document kept in memory for ever on a node whose last scene left while a
    /// catch-up was reading (`DocumentChannel.settled`); another node's presence given to an
    /// opening scene at the revision it was made at, outside the text by now
    /// (`presenceElsewhere(in:)`).
    @Test(arguments: Array(seeds.prefix(80)))
    func convergenceHoldsWithClientsSpreadOverTwoNodes(seed: UInt64) throws {
        var simulation = Simulation(seed: seed &+ 30_000, nodes: 2)
        try simulation.run(steps: 1_000)
        try simulation.settle()
        try simulation.check()
    }

    /// Documents of 200 KB to 1 MB: the same schedule over the server's rope, with cuts and
    /// pastes of thousands of scalars among the keystrokes, and snapshots of the whole text.
    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func convergenceHoldsOnLargeDocuments(seed: UInt64) throws {
        var simulation = Simulation(seed: seed &+ 20_000, large: true)
        try simulation.run(steps: 300)
        try simulation.settle()
        try simulation.check()
    }
}

// MARK: - The simulation

/// One run: a hub, a store, clients, and a random schedule.
private struct Simulation {
    /// One hub, or several nodes on one store (`nodes: 2`).
    var nodes: [HubHarness]
    var harness: HubHarness {
        get { nodes[0] }
        set { nodes[0] = newValue }
    }
    /// Notices each node has yet to hear of the others' writes.
    var notices: [[ChangeNotice]]
    /// How many of each node's commits were announced: a store announces a commit when it
    /// takes it, which may be after the effect that asked for it (a commit made while a load
    /// completes waits for that node's next event).
    var announced: [Int] = []
    var random: SplitMix64
    var clients: [SimulatedClient] = []
    /// Server-side paths reached (see `theScheduleReachesEveryPath`).
    var seen: Set<String> = []
    let document: String
    let initialText: String

    init(seed: UInt64, snapshotEvery: Int? = nil, retention: Int? = nil, large: Bool = false, nodes count: Int = 1,
         slowCommits: Bool? = nil) {
        random = SplitMix64(seed: seed)
        var settings = Settings()
        settings.rateLimitPerSecond = 1_000_000
        settings.rateLimitBurst = 1_000_000
        settings.documentListIntervalMs = 0
        settings.snapshotEvery = snapshotEvery ?? [1, 3, 10, 100].randomElement(using: &random)!
        settings.operationLogRetention = retention ?? [5, 20, 1_000].randomElement(using: &random)!
        settings.operationLogRetentionMs = 0  // by count only: short logs, so snapshot catch-ups happen
        let store = MemoryStore()
        nodes = [count > 1 ? HubHarness(settings: settings, store: store, node: NodeID("a"), ids: .sequential(from: 0))
                           : HubHarness(settings: settings, store: store)]
        notices = Array(repeating: [], count: count)
        announced = Array(repeating: 0, count: count)
        let (owner, _) = nodes[0].connect(name: "owner")
        initialText = large
            ? Alphabet.largeText(length: Int.random(in: 90_000...450_000, using: &random), using: &random)
            : Alphabet.text(length: Int.random(in: 0...12, using: &random), using: &random)
        document = nodes[0].createDocument(owner, title: "Shared", text: initialText)
        nodes[0].run(.closed(owner, abnormal: false))
        for index in 1..<max(count, 1) {
            nodes.append(HubHarness(settings: settings, stored: try! store.loadState(), store: store,
                                    node: NodeID("n\(index)"), ids: .sequential(from: index << 40)))
        }
        let slowCommits = slowCommits ?? Bool.random(using: &random)
        for index in nodes.indices {
            nodes[index].completesLoads = false
            // A slow disk: a commit's outcome comes back whenever the dice say, so edits,
            // closes, reconnects and other nodes' notices arrive while it is in flight.
            nodes[index].completesCommits = !slowCommits
        }
        let count = Int.random(in: 2...4, using: &random)
        for index in 0..<count { clients.append(SimulatedClient(name: "user\(index)")) }
    }

    // MARK: Steps

    mutating func run(steps: Int) throws {
        for _ in 0..<steps {
            let index = Int.random(in: 0..<clients.count, using: &random)
            let roll = Int.random(in: 0..<100, using: &random)
            switch roll {
            case 0..<25: edit(index)
            case 25..<52:
                for _ in 0..<Int.random(in: 1...3, using: &random) { try deliverToHub(index) }
            case 52..<82:
                for _ in 0..<Int.random(in: 1...4, using: &random) { try deliverToClient(index) }
            case 82..<85: completeLoads()
            case 85..<87: completeCommits()
            case 87..<89: disconnect(index)
            case 89..<93: connect(index)
            case 93: reload(index)
            case 94: reopen(index)
            case 95..<98: sharePresence(index)
            default:
                let step = Millis.random(in: 0...50, using: &random)
                for node in nodes.indices {
                    nodes[node].clock.advance(step)
                    route(nodes[node].run(.tick), from: node)
                }
            }
        }
    }

    /// Reconnects everyone and delivers everything until nothing is in flight.
    mutating func settle() throws {
        var idleTicks = 0
        for _ in 0..<10_000 {
            var moved = false
            // Everyone reconnects, also a client the server closed while settling.
            for index in clients.indices where clients[index].connection == nil {
                connect(index)
                moved = true
            }
            if nodes.contains(where: { !$0.pendingLoads.isEmpty }) {
                completeLoads()
                moved = true
            }
            if nodes.contains(where: { !$0.pendingCommits.isEmpty }) {
                completeCommits()
                moved = true
            }
            if notices.contains(where: { !$0.isEmpty }) {
                deliverNotices()
                moved = true
            }
            for index in clients.indices {
                if !clients[index].outbox.isEmpty {
                    try deliverToHub(index)
                    moved = true
                }
                if !clients[index].inbox.isEmpty {
                    try deliverToClient(index)
                    moved = true
                }
            }
            if !moved {
                // Several nodes: what waits on a deadline (a lease, a probe) needs time to pass.
                guard nodes.count > 1, idleTicks < 40 else { return }
                idleTicks += 1
                for node in nodes.indices {
                    nodes[node].clock.advance(500)
                    route(nodes[node].run(.tick), from: node)
                }
            }
        }
        Issue.record("the simulation did not settle")
    }

    mutating func check() throws {
        let server = try #require(harness.rope(of: document), "the document is not in the store")
        var revision: Int64?
        for client in clients {
            #expect(client.phase == .open, "\(client.name) is \(client.phase)")
            #expect(client.ot?.state == .synchronized, "\(client.name) has unacknowledged edits")
            let (mine, theirs) = (client.text.prefix(200).debugDescription, server.prefix(200).debugDescription)
            #expect(client.text == server, "\(client.name): \(mine)… != server \(theirs)…")
            revision = revision ?? client.ot?.revision
            #expect(client.ot?.revision == revision, "\(client.name) is at another revision")
        }

        // The server's history, in the order it was made durable.
        let history = nodes.flatMap(\.committed).flatMap(\.commands).compactMap { command -> StoredOperation? in
            if case .appendOperation(_, let entry, _) = command { entry } else { nil }
        }.sorted { $0.revision < $1.revision }
        #expect(history.map(\.revision) == (0..<history.count).map { Int64($0 + 1) })
        #expect(Int64(history.count) == revision)
        // Replaying it from the initial text gives the text everyone has.
        var replayed = Rope(initialText)
        for entry in history { replayed = try entry.operation.apply(to: replayed) }
        #expect(replayed == server)
        // Every acknowledgement names the revision its operation really has.
        let byRevision = Dictionary(uniqueKeysWithValues: history.map { ($0.revision, $0.opId) })
        for client in clients {
            for (opId, revision) in client.acknowledged {
                #expect(byRevision[revision] == opId, "\(client.name): \(opId) acknowledged as \(revision)")
            }
            // No operation applied more often than it was sent out as new.
            for (opId, made) in client.madeIds {
                let applied = history.count { $0.opId == opId }
                #expect(applied <= made, "\(opId) applied \(applied) times but made \(made) times")
            }
        }
        // Presence stayed inside the text.
        let (reader, _) = harness.connect(name: "reader")
        harness.completesLoads = true
        let opened = harness.openDocument(reader, document)["result"]
        for presence in opened?["presence"]?.arrayValue ?? [] {
            for end in ["anchor", "head"] {
                let position = presence["selection"]?[end]?.intValue ?? 0
                #expect((0...Int64(server.scalarCount)).contains(position))
            }
        }
        // A document nobody has open is not held; a restart reads back the same text.
        harness.run(.closed(reader, abnormal: false))
        for client in clients {
            if let connection = client.connection { nodes[client.node].run(.closed(connection, abnormal: false)) }
        }
        for node in nodes { #expect(node.hub.documentCounts.loaded == 0) }
        var restarted = try harness.restarted()
        let (again, _) = restarted.connect(name: "later")
        let reread = restarted.openDocument(again, document)["result"]?["text"]?.stringValue ?? ""
        #expect(Rope(reread) == server)
    }

    // MARK: Client actions

    /// A local edit, applied to the client's text at once and handed to its OT client.
    mutating func edit(_ index: Int) {
        guard clients[index].ot != nil else { return }
        let operation = Alphabet.operation(length: clients[index].text.scalarCount, using: &random)
        clients[index].text = try! operation.apply(to: clients[index].text)
        try! clients[index].ot!.applyClient(operation)
        clients[index].sendPending()
    }

    mutating func disconnect(_ index: Int) {
        guard let connection = clients[index].connection else { return }
        let abnormal = Bool.random(using: &random)
        let node = clients[index].node
        clients[index].dropConnection()
        route(nodes[node].run(.closed(connection, abnormal: abnormal)), from: node)
    }

    /// A new connection: `connect`, then (on its reply) `openDocument` from the client's revision.
    mutating func connect(_ index: Int) {
        guard clients[index].connection == nil else { return }
        // A (re)connect reaches any node, as through a load balancer.
        let node = Int.random(in: 0..<nodes.count, using: &random)
        clients[index].node = node
        // Opening is an event too: a commit a finished load made waits for it, and what that
        // commit's outcome sends (acks, operations) must reach the clients.
        let before = nodes[node].effects.count
        let connection = nodes[node].open()
        route(Array(nodes[node].effects[before...]), from: node)
        clients[index].connection = connection
        clients[index].phase = .connecting
        var fields: JSONObject = ["protocol": 1, "auth": ["name": .string(clients[index].name)]]
        if let credentials = clients[index].credentials { fields["session"] = credentials }
        clients[index].queue("connect", fields, as: .connect)
    }

    /// A reloaded tab: everything local is gone, unacknowledged edits too; it starts over from
    /// a fresh open with a new OT client whose op ids count from 1 again.
    mutating func reload(_ index: Int) {
        disconnect(index)
        clients[index].ot = nil
        clients[index].text = ""
    }

    /// Closes the document and opens it again on the same connection, catching up from the
    /// client's revision; the document may be evicted and loaded again in between.
    mutating func reopen(_ index: Int) {
        guard clients[index].phase == .open, clients[index].ot != nil else { return }
        // Edits wait from here; the open goes out once the close is answered, so the revision
        // it names counts every operation that arrived before the close.
        clients[index].ot!.disconnected()
        clients[index].phase = .opening
        clients[index].queue("closeDocument", ["document": .string(document)], as: .reopen)
    }

    mutating func sharePresence(_ index: Int) {
        guard clients[index].phase == .open, let ot = clients[index].ot else { return }
        let length = clients[index].text.scalarCount
        let anchor = Int64.random(in: 0...Int64(length), using: &random)
        let head = Int64.random(in: 0...Int64(length), using: &random)
        clients[index].queue("setPresence", ["document": .string(document), "revision": .int(ot.revision),
                                             "selection": ["anchor": .int(anchor), "head": .int(head)],
                                             "name": .string(clients[index].name)], as: .other)
    }

    // MARK: Delivery

    mutating func deliverToHub(_ index: Int) throws {
        guard let connection = clients[index].connection, !clients[index].outbox.isEmpty else { return }
        let message = clients[index].outbox.removeFirst()
        let node = clients[index].node
        route(nodes[node].run(.received(connection, message)), from: node)
    }

    mutating func completeLoads() {
        if !harness.pendingLoads.isEmpty, harness.effects.contains(where: { if case .load = $0 { true } else { false } }) {
            let loads = harness.effects.count { if case .load = $0 { true } else { false } }
            if loads > 1 { seen.insert("load after eviction") }
        }
        for node in nodes.indices { route(nodes[node].completeLoads(), from: node) }
        deliverNotices()
    }

    mutating func completeCommits() {
        for node in nodes.indices { route(nodes[node].completeCommits(), from: node) }
        deliverNotices()
    }

    /// Lets every node hear what the others wrote so far.
    mutating func deliverNotices() {
        for node in nodes.indices {
            let pending = notices[node]
            notices[node] = []
            for notice in pending { route(nodes[node].run(.notice(notice)), from: node) }
        }
    }

    /// Puts what the hub sent into the inboxes of the clients whose connection it was for.
    mutating func route(_ effects: [Effect], from node: Int = 0) {
        for index in clients.indices where clients[index].node == node {
            guard let connection = clients[index].connection else { continue }
            clients[index].inbox += effects.messages(to: connection)
        }
        if nodes.count > 1 {
            // Channels: the commits the store took since the last look; records and signals:
            // the effects themselves (persists are applied as they come out).
            let taken = nodes[node].committed.dropFirst(announced[node]).map { Effect.commit($0) }
            announced[node] = nodes[node].committed.count
            let others = effects.filter { if case .commit = $0 { false } else { true } }
            let heard = TwoNodes.notices(for: taken + others)
            for other in nodes.indices where other != node { notices[other] += heard }
        }
        // The hub closed a connection (a node that fell behind the kept log tells its scenes
        // to reconnect, 4008): whatever was in flight on it is lost, the runtime reports the
        // close, and the client comes back later like after any drop.
        for case .close(let connection, _, _) in effects {
            guard let index = clients.firstIndex(where: { $0.node == node && $0.connection == connection }) else { continue }
            seen.insert("closed by the server")
            clients[index].dropConnection()
            route(nodes[node].run(.closed(connection, abnormal: false)), from: node)
        }
    }

    mutating func deliverToClient(_ index: Int) throws {
        guard !clients[index].inbox.isEmpty else { return }
        let message = clients[index].inbox.removeFirst()
        let variant = Bool.random(using: &random)
        if let outcome = try clients[index].receive(message, document: document, resendFirst: variant),
           outcome == .mustReconnect
        {
            // The kept log no longer reaches the client's revision: re-open from scratch.
            disconnect(index)
            connect(index)
        }
    }
}

// MARK: - A client

/// A browser tab: a connection, its in-flight messages, the document text and its OT client.
private struct SimulatedClient {
    enum Phase: Equatable { case disconnected, connecting, opening, open }
    enum Request { case connect, open, reopen, edit, other }
    enum Outcome { case mustReconnect }

    let name: String
    /// The node its connection reached (always 0 with one hub).
    var node = 0
    var connection: ConnectionID?
    var credentials: JSONValue?
    var phase = Phase.disconnected
    /// A rope, as the server's, so megabyte documents cost a client O(log n) per operation.
    var text = Rope()
    var ot: OTClient?
    /// Client to hub, not yet delivered.
    var outbox: [JSONValue] = []
    /// Hub to client, not yet processed.
    var inbox: [JSONValue] = []
    var requests: [Int64: Request] = [:]
    var nextRequest: Int64 = 0
    /// (opId, revision) for every acknowledgement this client had.
    var acknowledged: [(String, Int64)] = []
    /// How many distinct operations were sent under each op id (ids repeat after a reload).
    var madeIds: [String: Int] = [:]
    /// Op ids the current OT client has sent; a resend reuses one, a new client starts afresh.
    var epochIds: Set<String> = []
    /// How many OT clients this tab has started (each names its op ids apart).
    var generation = 0
    /// Op ids a catch-up acknowledged (their own reply may still come, and is not in flight then).
    var acknowledgedInCatchUp: Set<String> = []
    /// Which paths this client went through, so a test can check the schedule reaches them all.
    var seen: Set<String> = []

    init(name: String) {
        self.name = name
    }

    mutating func queue(_ type: String, _ fields: JSONObject, as kind: Request) {
        nextRequest += 1
        var object = fields
        object["type"] = .string(type)
        object["id"] = .int(nextRequest)
        requests[nextRequest] = kind
        outbox.append(.object(object))
    }

    mutating func openDocument(_ document: String) {
        var fields: JSONObject = ["document": .string(document)]
        if let ot { fields["revision"] = .int(ot.revision) }
        phase = .opening
        queue("openDocument", fields, as: .open)
    }

    /// Turns what the OT client wants sent into `edit` requests.
    mutating func sendPending() {
        guard var ot else { return }
        let sends = ot.takeSent()
        self.ot = ot
        for send in sends {
            if epochIds.insert(send.opId).inserted { madeIds[send.opId, default: 0] += 1 }
            queue("edit", ["document": .string(send.document ?? ""), "revision": .int(send.revision),
                           "operation": send.operation.json, "opId": .string(send.opId)], as: .edit)
        }
    }

    mutating func dropConnection() {
        connection = nil
        phase = .disconnected
        outbox.removeAll()
        inbox.removeAll()
        requests.removeAll()
        ot?.disconnected()
    }

    /// Processes one message from the hub.
    mutating func receive(_ message: JSONValue, document: String, resendFirst: Bool) throws -> Outcome? {
        if message["type"] == "reply" {
            guard let id = message["re"]?.intValue, let kind = requests.removeValue(forKey: id) else {
                Issue.record("\(name): a reply to nothing: \(message)")
                return nil
            }
            guard message["ok"] == true else {
                let code = message["error"]?["code"]?.stringValue
                if kind == .edit, code == "revision_unavailable" {
                    seen.insert("edit revision_unavailable")
                    return .mustReconnect
                }
                // Presence made on a revision the log has forgotten is refused; it is only a caret.
                if kind == .other, code == "revision_unavailable" { return nil }
                Issue.record("\(name): \(kind) failed: \(message)")
                return nil
            }
            let result = message["result"] ?? .null
            switch kind {
            case .connect:
                credentials = ["id": result["session"]?["persistentIdentifier"] ?? .null,
                               "secret": result["session"]?["secret"] ?? .null]
                openDocument(document)
            case .open:
                try opened(result, document: document, resendFirst: resendFirst)
            case .edit:
                let opId = result["opId"]?.stringValue ?? ""
                let revision = result["revision"]?.intValue ?? -1
                acknowledged.append((opId, revision))
                if result["duplicate"] == true { seen.insert("duplicate reply") }
                if ot?.outstandingId == opId, let held = ot?.revision, revision != held + 1 {
                    // As `web/lib/documents.js`: operations applied before this one have not
                    // reached this client (it closed the document while the edit waited, or
                    // they are on their way): counting the ack now would skip one of them. The
                    // catch-up replays this operation too, and its op id acknowledges it.
                    seen.insert("ack after a gap")
                    #expect(phase == .opening, "\(name): ack \(revision) at \(held), with the document open: a gap")
                    catchUp(document)
                } else if ot?.outstandingId == opId, ot?.serverAck(opId) == true {
                    // Acknowledged; the buffer may go out now.
                } else {
                    // A duplicate reply after a resend, or an op a catch-up acknowledged already.
                    #expect(result["duplicate"] == true || ot == nil || acknowledgedInCatchUp.contains(opId),
                            "\(name): ack for \(opId) not in flight")
                }
                sendPending()
            case .reopen:
                openDocument(document)
            case .other:
                break
            }
            return nil
        }
        switch message["type"]?.stringValue {
        case "documentOperation":
            guard phase == .open || phase == .opening, ot != nil else { return nil }
            try applyServer(message, document: document)
        case "presence", "documentsChanged", "sessionsChanged":
            break
        default:
            Issue.record("\(name): unexpected \(message)")
        }
        return nil
    }

    /// The `openDocument` reply: a first open, or a catch-up after a reconnect or re-open.
    mutating func opened(_ result: JSONValue, document: String, resendFirst: Bool) throws {
        let revision = result["revision"]?.intValue ?? -1
        seen.insert("catchUp \(result["catchUp"]?.stringValue ?? "fresh")\(resendFirst ? ", resend first" : "")")
        switch result["catchUp"]?.stringValue {
        case nil, "snapshot":
            // Fresh, or the log no longer reaches back: start over on the server's text; edits
            // not acknowledged are lost (they were never acknowledged).
            text = Rope(result["text"]?.stringValue ?? "")
            epochIds = []
            // A new prefix for each new OT client, as the browser's (`loadNonce` and
            // `openCount`): an earlier client's operation still in flight comes back with its
            // id, and must not be taken for this one's (the server's side of a reused id is
            // `DocumentEditingTests.anOpIdReusedAtOrAfterItsRevisionIsANewOperation`).
            generation += 1
            ot = OTClient(revision: revision, idPrefix: "\(name).\(generation)", document: document)
        case "none":
            ot!.resend()
        case "operations":
            // The other order is just as valid: resend first (at the old revision), then apply
            // the operations, which may acknowledge it; the server then answers `duplicate`.
            if resendFirst { ot!.resend() }
            for entry in result["operations"]?.arrayValue ?? [] { try applyServer(entry, document: document) }
            if !resendFirst { ot!.resend() }
        default:
            Issue.record("\(name): unknown catchUp in \(result)")
        }
        #expect(ot?.revision == revision, "\(name): at \(ot?.revision ?? -1) after opening at \(revision)")
        phase = .open
        sendPending()
    }

    /// A server operation (an event or a caught-up one).
    mutating func applyServer(_ entry: JSONValue, document: String) throws {
        let revision = entry["revision"]?.intValue ?? -1
        // As `web/lib/documents.js`: one seen already (an event and then the same operation in
        // a catch-up) is skipped; a gap means some did not arrive, and a catch-up fetches them.
        if revision <= ot!.revision {
            seen.insert("operation seen already")
            #expect(phase == .opening, "\(name): operation \(revision) again at \(ot!.revision), with the document open")
            return
        }
        if revision > ot!.revision + 1 {
            seen.insert("operation after a gap")
            #expect(phase == .opening, "\(name): operation \(revision) at \(ot!.revision), with the document open: a gap")
            catchUp(document)
            return
        }
        let operation = try TextOperation(json: entry["operation"] ?? .null)
        let opId = entry["opId"]?.stringValue
        let before = ot!.outstandingId
        if let local = try ot!.applyServer(operation, opId: opId) {
            text = try local.apply(to: text)
        } else if let opId, opId == before {
            acknowledged.append((opId, revision))
            acknowledgedInCatchUp.insert(opId)
            seen.insert("own operation in catch-up")
        }
        sendPending()
    }

    /// Re-opens at the local revision, as `web/lib/documents.js` does on a gap: edits wait,
    /// and the reply's operations fill the gap (unless a re-open is on its way already).
    mutating func catchUp(_ document: String) {
        guard phase == .open else { return }
        ot?.disconnected()
        openDocument(document)
    }
}

// MARK: - The browser's OT client, in Swift

/// `web/lib/ot-client.js`, line for line: at most one operation in flight, later edits
/// buffered; incoming operations transformed with the server's argument order (the operation
/// the server has not applied yet first). Instead of a `send` callback it collects sends.
struct OTClient: Sendable {
    enum State: Equatable, Sendable {
        case synchronized
        case awaitingConfirm(outstanding: TextOperation, opId: String)
        case awaitingWithBuffer(outstanding: TextOperation, opId: String, buffer: TextOperation)
    }

    struct Send: Sendable {
        var document: String?
        var revision: Int64
        var operation: TextOperation
        var opId: String
    }

    private(set) var revision: Int64
    let idPrefix: String
    let document: String?
    private var counter = 0
    private(set) var state = State.synchronized
    private(set) var connected = true
    private var sent: [Send] = []

    init(revision: Int64, idPrefix: String, document: String? = nil) {
        self.revision = revision
        self.idPrefix = idPrefix
        self.document = document
    }

    var outstandingId: String? {
        switch state {
        case .synchronized: nil
        case .awaitingConfirm(_, let opId), .awaitingWithBuffer(_, let opId, _): opId
        }
    }

    /// What `send` would have been called with, in order; empties the list.
    mutating func takeSent() -> [Send] {
        defer { sent.removeAll() }
        return sent
    }

    private mutating func nextId() -> String {
        counter += 1
        return "\(idPrefix):\(counter)"
    }

    private mutating func send(_ operation: TextOperation, _ opId: String) {
        sent.append(Send(document: document, revision: revision, operation: operation, opId: opId))
    }

    mutating func applyClient(_ operation: TextOperation) throws {
        if operation.isNoop { return }
        switch state {
        case .synchronized:
            let opId = nextId()
            state = .awaitingConfirm(outstanding: operation, opId: opId)
            if connected { send(operation, opId) }
        case .awaitingConfirm(let outstanding, let opId):
            state = .awaitingWithBuffer(outstanding: outstanding, opId: opId, buffer: operation)
        case .awaitingWithBuffer(let outstanding, let opId, let buffer):
            state = .awaitingWithBuffer(outstanding: outstanding, opId: opId, buffer: try buffer.compose(operation))
        }
    }

    mutating func applyServer(_ operation: TextOperation, opId: String?) throws -> TextOperation? {
        if let opId, let outstanding = outstandingId, opId == outstanding {
            _ = serverAck(nil)
            return nil
        }
        revision += 1
        switch state {
        case .synchronized:
            return operation
        case .awaitingConfirm(let outstanding, let opId):
            let (rebased, local) = try TextOperation.transform(outstanding, operation)
            state = .awaitingConfirm(outstanding: rebased, opId: opId)
            return local
        case .awaitingWithBuffer(let outstanding, let opId, let buffer):
            let (rebased, pastOutstanding) = try TextOperation.transform(outstanding, operation)
            let (rebasedBuffer, local) = try TextOperation.transform(buffer, pastOutstanding)
            state = .awaitingWithBuffer(outstanding: rebased, opId: opId, buffer: rebasedBuffer)
            return local
        }
    }

    @discardableResult
    mutating func serverAck(_ opId: String?) -> Bool {
        guard let outstanding = outstandingId, opId == nil || opId == outstanding else { return false }
        revision += 1
        switch state {
        case .synchronized:
            return false
        case .awaitingConfirm:
            state = .synchronized
        case .awaitingWithBuffer(_, _, let buffer):
            let next = nextId()
            state = .awaitingConfirm(outstanding: buffer, opId: next)
            if connected { send(buffer, next) }
        }
        return true
    }

    mutating func disconnected() {
        connected = false
    }

    mutating func resend() {
        connected = true
        switch state {
        case .synchronized: break
        case .awaitingConfirm(let outstanding, let opId), .awaitingWithBuffer(let outstanding, let opId, _):
            send(outstanding, opId)
        }
    }
}

// MARK: - Random edits

/// Text pieces that trip up code counting the wrong unit: astral-plane characters, combining
/// marks (alone and after a letter), skin-tone modifiers, ZWJ sequences, CJK, newlines.
private enum Alphabet {
    static let pieces = ["a", "b", "c", " ", "\n", "é", "e\u{301}", "\u{301}", "😀", "👍🏽", "👩‍💻", "\u{1D11E}", "中", "🇯🇵"]

    static func text(length: Int, using random: inout SplitMix64) -> String {
        var text = ""
        var count = 0
        while count < length {
            let piece = pieces.randomElement(using: &random)!
            text += piece
            count += piece.unicodeScalars.count
        }
        return text
    }

    /// About `length` scalars: a random block, repeated (building it all piece by piece would
    /// cost the suite seconds in a debug build).
    static func largeText(length: Int, using random: inout SplitMix64) -> String {
        let block = text(length: 5_000, using: &random)
        return String(repeating: block, count: max(length / 5_000, 1))
    }

    /// A random edit of a text of `length` scalars: an insert, a delete (often long, across
    /// others' inserts), a replacement, or two edits in one operation.
    static func operation(length: Int, using random: inout SplitMix64) -> TextOperation {
        if length > 10_000 { return largeOperation(length: length, using: &random) }
        var operation = TextOperation()
        let kind = Int.random(in: 0..<4, using: &random)
        let long = length > 60
        if length == 0 || (kind == 0 && !long) {
            let at = Int.random(in: 0...length, using: &random)
            operation.retain(at)
            operation.insert(Self.text(length: Int.random(in: 1...4, using: &random), using: &random))
            operation.retain(length - at)
        } else if kind == 1 || long {
            let from = Int.random(in: 0..<length, using: &random)
            let count = Int.random(in: 1...min(length - from, 8), using: &random)
            operation.retain(from)
            operation.delete(count)
            operation.retain(length - from - count)
        } else if kind == 2 {
            let from = Int.random(in: 0..<length, using: &random)
            let count = Int.random(in: 1...(length - from), using: &random)
            operation.retain(from)
            operation.delete(count)
            operation.insert(Self.text(length: Int.random(in: 1...3, using: &random), using: &random))
            operation.retain(length - from - count)
        } else {
            let lower = Int.random(in: 0...length, using: &random)
            let upper = Int.random(in: lower...length, using: &random)
            operation.retain(lower)
            operation.insert(Self.text(length: 1, using: &random))
            operation.retain(upper - lower)
            if upper < length {
                operation.delete(1)
                operation.retain(length - upper - 1)
            }
        }
        return operation
    }

    /// An edit of a large document: mostly keystrokes (an insert, a delete or a replacement
    /// of a few scalars anywhere), now and then a cut or a paste of thousands, and sometimes
    /// two edits in one operation.
    static func largeOperation(length: Int, using random: inout SplitMix64) -> TextOperation {
        var operation = TextOperation()
        var position = 0
        for _ in 0..<(Int.random(in: 0..<4, using: &random) == 0 ? 2 : 1) {
            let at = Int.random(in: position...(position + (length - position) / 2), using: &random)
            operation.retain(at - position)
            let roll = Int.random(in: 0..<20, using: &random)
            let deleted = roll == 0 ? Int.random(in: 1...4_000, using: &random)
                : roll < 8 ? Int.random(in: 0...8, using: &random) : 0
            let inserted = roll == 1 ? Int.random(in: 1...3_000, using: &random)
                : roll >= 5 ? Int.random(in: 1...4, using: &random) : 0
            operation.insert(text(length: inserted, using: &random))
            operation.delete(min(deleted, length - at))
            position = at + min(deleted, length - at)
        }
        operation.retain(length - position)
        return operation
    }
}
