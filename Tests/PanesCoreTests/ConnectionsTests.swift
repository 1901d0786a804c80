@testable import PanesCore
import Testing

/// The connections' table behind `Connections`: phases move in place, a closing connection's
/// frames are not admitted, the rate limit is spent per frame, and requests held behind a
/// `connect` are handed out once. The hub's use of it is checked in HubConnectTests and
/// HubHardeningTests.
@Suite struct ConnectionsTests {
    static func connection(_ id: UInt64, burst: Double = 2) -> Connection {
        Connection(id: ConnectionID(id), peer: nil, bucket: TokenBucket.Level(burst: burst, now: 0))
    }

    static func ping(_ id: Int64) throws -> ClientRequest {
        try MessageDecoder(settings: Settings()).decode(["type": "ping", "id": .int(id)]).get()
    }

    @Test func aConnectionMovesThroughItsPhasesAndClosingKeepsItsScene() {
        var connections = Connections()
        connections.open(Self.connection(1))
        connections.open(Self.connection(2))
        connections.setPhase(.scene(SceneID("s1")), of: ConnectionID(1))
        connections.setPhase(.scene(SceneID("s9")), of: ConnectionID(9))
        #expect(connections.count == 2 && connections.ids == [ConnectionID(1), ConnectionID(2)])
        let closed = connections.markClosing(ConnectionID(1))
        let closedAwaiting = connections.markClosing(ConnectionID(2))
        let closedUnknown = connections.markClosing(ConnectionID(9))
        #expect(closed && closedAwaiting && !closedUnknown)
        guard case .closing(let scene)? = connections[ConnectionID(1)]?.phase else { Issue.record("not closing"); return }
        #expect(scene == SceneID("s1"))
        guard case .closing(nil)? = connections[ConnectionID(2)]?.phase else { Issue.record("not closing"); return }
        let removed = connections.remove(ConnectionID(1))
        #expect(removed?.id == ConnectionID(1) && connections[ConnectionID(1)] == nil)
    }

    /// A wait that resolves after the close (a claim won or lost) cannot take the connection
    /// out of closing; a scene attached all the same is kept, to end with the socket.
    @Test func aClosingConnectionStaysClosing() {
        var connections = Connections()
        connections.open(Self.connection(1))
        connections.open(Self.connection(2))
        connections.setPhase(.answering(SessionID("ses_1")), of: ConnectionID(1))
        connections.setPhase(.answering(SessionID("ses_2")), of: ConnectionID(2))
        #expect(connections.isOpen(ConnectionID(1)) && !connections.isOpen(ConnectionID(9)))
        _ = connections.markClosing(ConnectionID(1))
        _ = connections.markClosing(ConnectionID(2))
        #expect(!connections.isOpen(ConnectionID(1)))
        connections.setPhase(.awaitingConnect, of: ConnectionID(1))
        connections.setPhase(.answering(SessionID("ses_1")), of: ConnectionID(1))
        guard case .closing(nil)? = connections[ConnectionID(1)]?.phase else { Issue.record("left closing"); return }
        connections.setPhase(.scene(SceneID("s2")), of: ConnectionID(2))
        connections.setPhase(.scene(SceneID("s3")), of: ConnectionID(2))
        guard case .closing(let scene)? = connections[ConnectionID(2)]?.phase else { Issue.record("left closing"); return }
        #expect(scene == SceneID("s2"))
        #expect(connections.admit(ConnectionID(2), now: 0, rate: 1, burst: 2) == .closing)
    }

    /// The connect timeout's queue drops a connection's entry once it is a scene or gone; one
    /// still waiting, answering or told to close keeps it (its phase read in place).
    @Test func onlyAConnectionThatIsASceneOrGoneIsPastItsConnect() {
        var connections = Connections()
        for id in 1...4 { connections.open(Self.connection(UInt64(id))) }
        connections.setPhase(.answering(SessionID("ses_2")), of: ConnectionID(2))
        connections.setPhase(.scene(SceneID("s3")), of: ConnectionID(3))
        _ = connections.markClosing(ConnectionID(4))
        #expect(!connections.isPastConnect(ConnectionID(1)) && !connections.isPastConnect(ConnectionID(2)))
        #expect(connections.isPastConnect(ConnectionID(3)) && !connections.isPastConnect(ConnectionID(4)))
        #expect(connections.isPastConnect(ConnectionID(9)))
        _ = connections.remove(ConnectionID(1))
        #expect(connections.isPastConnect(ConnectionID(1)))
    }

    @Test func framesSpendTheRateLimitAndAClosingConnectionAdmitsNone() {
        var connections = Connections()
        connections.open(Self.connection(1, burst: 2))
        let first = connections.admit(ConnectionID(1), now: 0, rate: 1, burst: 2)
        // The phase as it is at each frame: what `Hub.dispatch` goes by without a look-up of its own.
        connections.setPhase(.scene(SceneID("s1")), of: ConnectionID(1))
        let second = connections.admit(ConnectionID(1), now: 0, rate: 1, burst: 2)
        let third = connections.admit(ConnectionID(1), now: 0, rate: 1, burst: 2)
        #expect(first == .admitted(allowed: true, retryAfterMs: 0, phase: .awaitingConnect))
        #expect(second == .admitted(allowed: true, retryAfterMs: 0, phase: .scene(SceneID("s1"))))
        guard case .admitted(false, let retryAfter, .scene(SceneID("s1"))) = third else {
            Issue.record("admitted past the burst, or not as the scene it is now")
            return
        }
        #expect(retryAfter > 0)
        _ = connections.markClosing(ConnectionID(1))
        let closing = connections.admit(ConnectionID(1), now: 10_000, rate: 1, burst: 2)
        let unknown = connections.admit(ConnectionID(2), now: 0, rate: 1, burst: 2)
        #expect(closing == .closing && unknown == .unknown)
    }

    @Test func requestsHeldBehindAConnectAreHandedOutOnceInOrder() throws {
        var connections = Connections()
        connections.open(Self.connection(1))
        connections.hold(try Self.ping(1), on: ConnectionID(1))
        connections.hold(try Self.ping(2), on: ConnectionID(1))
        let held = connections.takeHeld(ConnectionID(1))
        let again = connections.takeHeld(ConnectionID(1))
        #expect(held.map(\.id) == [.int(1), .int(2)])
        #expect(again.isEmpty && connections.heldCount(ConnectionID(1)) == 0)
    }

    /// The held requests sit beside the table, by connection: each connection counts and gets
    /// its own, one not here holds none, and a connection removed takes its requests with it
    /// (a later connection of the same id starts with none).
    @Test func eachConnectionsHeldRequestsAreItsOwnAndGoWithIt() throws {
        var connections = Connections()
        connections.open(Self.connection(1))
        connections.open(Self.connection(2))
        connections.hold(try Self.ping(1), on: ConnectionID(1))
        connections.hold(try Self.ping(2), on: ConnectionID(2))
        connections.hold(try Self.ping(3), on: ConnectionID(1))
        connections.hold(try Self.ping(4), on: ConnectionID(9))
        #expect(connections.heldCount(ConnectionID(1)) == 2 && connections.heldCount(ConnectionID(2)) == 1)
        #expect(connections.heldCount(ConnectionID(9)) == 0 && connections.takeHeld(ConnectionID(9)).isEmpty)
        let two = connections.takeHeld(ConnectionID(2))
        #expect(two.map(\.id) == [.int(2)] && connections.heldCount(ConnectionID(1)) == 2)
        _ = connections.remove(ConnectionID(1))
        connections.open(Self.connection(1))
        #expect(connections.heldCount(ConnectionID(1)) == 0 && connections.takeHeld(ConnectionID(1)).isEmpty)
    }

    /// Every connection the server holds has one (10,000 idle scenes: 10,000 records): 96 bytes
    /// with a time nothing read and the settings' rate and burst copied into each; 72 with an
    /// empty array of held requests in each; 64 with those beside the table.
    @Test func aConnectionRecordHoldsNoCopyOfTheRateLimitSettingsNorItsHeldRequests() {
        #expect(MemoryLayout<Connection>.stride <= 64)
        #expect(MemoryLayout<Connection?>.stride <= 64, "a table's slot (`DenseTable`) is no wider")
    }
}
