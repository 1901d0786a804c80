import Foundation
import PanesTestSupport
@testable import PanesTransport
import Testing

/// The address noted for each accepted socket, by its descriptor.
@Suite struct AcceptedPeersTests {
    @Test func aSlotHoldsTheLastAddressNotedForItsDescriptor() {
        var peers = AcceptedPeers()
        #expect(peers[7] == nil)
        peers[7] = "10.0.0.7"
        peers[3] = "2001:db8:1:2::/64"
        #expect(peers[7] == "10.0.0.7")
        #expect(peers[3] == "2001:db8:1:2::/64")
        #expect(peers[5] == nil)
        // The kernel hands the descriptor to another connection: its accept overwrites the slot.
        peers[7] = "10.0.0.8"
        #expect(peers[7] == "10.0.0.8")
        // A socket that is not an IP one leaves nothing to read: the reader asks the socket.
        peers[7] = nil
        #expect(peers[7] == nil)
        peers[-1] = "10.0.0.9"
        #expect(peers[-1] == nil)
        #expect(peers[1_000] == nil)
    }

    /// What the accept filter notes for a peer's address bytes, as the socket gives them: an
    /// IPv6 peer by its /64 (the server listens on IPv4 only, `LWS_SERVER_OPTION_DISABLE_IPV6`,
    /// so no real IPv6 connection can reach it), the key the delegate is asked about; a
    /// descriptor given to a new connection is keyed by the new address; a connection closed at
    /// accept leaves its slot empty.
    @Test func theAcceptFilterNotesEachPeerByItsKeyUnderItsDescriptor() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        harness.recorder.closesAtAccept = { $0 == "2001:db8:9:9::/64" }
        let ipv6: [UInt8] = [0x20, 0x01, 0x0D, 0xB8, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 5]
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 7]
        let refused: [UInt8] = [0x20, 0x01, 0x0D, 0xB8, 0, 9, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1]
        let noted = harness.onServiceThread { server -> [String?] in
            let descriptor: Int32 = 60_000  // far above any this process opens
            defer { server.acceptedPeers[descriptor] = nil }
            var slots: [String?] = []
            for address in [ipv6, mapped, [10, 0, 0, 8], refused] {
                server.acceptedPeers[descriptor] = nil  // its previous connection closed
                let closes = address.withUnsafeBytes { server.closesAccepted(descriptor: descriptor, address: $0) }
                // lws adopts what the filter lets through (`LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED`).
                if !closes { server.acceptedPeers.adopted(descriptor) }
                slots.append(closes ? "closed" : server.acceptedPeers[descriptor])
                slots.append(server.acceptedPeers[descriptor])
            }
            return slots
        }
        #expect(noted == ["2001:db8:1:2::/64", "2001:db8:1:2::/64", "10.0.0.7", "10.0.0.7", "10.0.0.8", "10.0.0.8", "closed", nil])
        #expect(harness.recorder.snapshot.askedAtAccept == ["2001:db8:1:2::/64", "10.0.0.7", "10.0.0.8", "2001:db8:9:9::/64"])
    }

    /// A socket the filter let through but lws closed without adopting it (a descriptor over
    /// lws' limit, no memory for a connection: no callback follows the filter) never gets a
    /// slot; the next socket lws does adopt gets its own key, and a mismatched adoption none.
    @Test func aSocketLwsNeverAdoptedGetsNoSlot() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        let slots = harness.onServiceThread { server -> [String?] in
            let (dropped, next): (Int32, Int32) = (60_001, 60_002)  // far above any this process opens
            defer { (server.acceptedPeers[dropped], server.acceptedPeers[next]) = (nil, nil) }
            _ = [UInt8]([10, 0, 0, 1]).withUnsafeBytes { server.closesAccepted(descriptor: dropped, address: $0) }
            _ = [UInt8]([10, 0, 0, 2]).withUnsafeBytes { server.closesAccepted(descriptor: next, address: $0) }
            server.acceptedPeers.adopted(next)
            let afterNext = [server.acceptedPeers[dropped], server.acceptedPeers[next]]
            // An adoption of a descriptor the filter did not see last notes nothing for it.
            server.acceptedPeers.adopted(dropped)
            return afterNext + [server.acceptedPeers[dropped]]
        }
        #expect(slots == [nil, "10.0.0.2", nil])
    }

    /// The upgrade's checks (the per-address limit's key) and the connection read the slot the
    /// accept wrote for their descriptor: rewritten between the accept and the request to the
    /// key an IPv6 peer's accept notes, it is what the upgrade asks about; and the slot is
    /// emptied when the connection closes.
    @Test func theUpgradeReadsTheSlotNotedAtAcceptForItsDescriptor() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        var options = WebSocketClient.Options()
        options.sourceAddress = "127.0.0.93"
        options.afterConnecting = {
            #expect(harness.recorder.wait { $0.askedAtAccept.contains("127.0.0.93") })
            harness.onServiceThread { server in
                if let descriptor = Self.descriptor(holding: "127.0.0.93", in: server) {
                    server.acceptedPeers[descriptor] = "2001:db8:1:2::/64"
                }
            }
        }
        do {
            let client = try harness.client(options)
            #expect(harness.recorder.snapshot.askedAtUpgrade == ["2001:db8:1:2::/64"])
            #expect(harness.recorder.wait { $0.opened.count == 1 })
            // The delegate hears it with the open (the transport keeps no copy: the hub does).
            #expect(harness.recorder.snapshot.openedPeers == ["2001:db8:1:2::/64"])
            withExtendedLifetime(client) {}
        }
        #expect(harness.recorder.wait { $0.closed.count == 1 })
        #expect(harness.onServiceThread { Self.descriptor(holding: "2001:db8:1:2::/64", in: $0) } == nil)
    }

    /// A descriptor the kernel hands to the next connection, from another address, is keyed
    /// by that address; between the two its slot is empty. (The kernel gives the lowest free
    /// descriptor, but other tests open sockets meanwhile: tried until it is the same one.) Each
    /// connection's descriptor is found during its upgrade: an open WebSocket holds no slot.
    @Test func aDescriptorReusedByANewConnectionIsKeyedByTheNewAddress() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        var reused = false
        for attempt in 0..<30 where !reused {
            let closedBefore = harness.recorder.snapshot.closed.count
            let old: Int32
            do {
                let (first, noted) = try Self.client(from: "127.0.0.94", in: harness)
                old = try #require(noted.value)
                first.abort()
            }
            #expect(harness.recorder.wait { $0.closed.count == closedBefore + 1 })
            #expect(harness.onServiceThread { $0.acceptedPeers[old] } == nil, "attempt \(attempt): the closed connection's slot")

            let closedNow = harness.recorder.snapshot.closed.count
            do {
                let (second, new) = try Self.client(from: "127.0.0.95", in: harness)
                if new.value == old {
                    reused = true
                    #expect(harness.recorder.snapshot.askedAtUpgrade.last == "127.0.0.95")
                    #expect(harness.recorder.wait { $0.opened.count == closedNow + 1 })
                    #expect(harness.recorder.snapshot.openedPeers.last == "127.0.0.95")
                }
                second.abort()
            }
            #expect(harness.recorder.wait { $0.closed.count == closedNow + 1 })
        }
        #expect(reused, "the kernel never gave the closed descriptor to the next connection")
    }

    /// Once a WebSocket is open its slot is empty (the delegate was told the key with the
    /// open), and with no other connection no chunk of slots is kept: idle scenes hold none.
    @Test func anOpenWebSocketHoldsNoSlot() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        let (client, noted) = try Self.client(from: "127.0.0.92", in: harness)
        try withExtendedLifetime(client) {
            let descriptor = try #require(noted.value, "its slot held its key during the upgrade")
            #expect(harness.recorder.wait { $0.opened.count == 1 })
            #expect(harness.recorder.snapshot.openedPeers == ["127.0.0.92"])
            let (slot, chunks) = harness.onServiceThread { ($0.acceptedPeers[descriptor], $0.acceptedPeers.chunksHeld) }
            #expect(slot == nil && chunks == 0)
        }
    }

    @Test func aChunkOfSlotsIsMadeWithItsFirstKeyAndFreedWithItsLast() {
        var peers = AcceptedPeers()
        let size = Int32(AcceptedPeers.chunkSize)
        peers[1] = "10.0.0.1"
        peers[2] = "10.0.0.2"
        peers[3 * size] = "10.0.0.3"
        #expect(peers.chunksHeld == 2)
        peers[2] = nil
        peers[2] = nil  // twice: counted once
        peers[5] = nil  // never held
        #expect(peers.chunksHeld == 2 && peers[1] == "10.0.0.1")
        peers[1] = "10.0.0.4"  // overwritten: still one key
        peers[1] = nil
        #expect(peers.chunksHeld == 1 && peers[1] == nil && peers[3 * size] == "10.0.0.3")
        peers[3 * size] = nil
        #expect(peers.chunksHeld == 0 && peers[3 * size] == nil)
        peers[3 * size + 1] = "10.0.0.5"
        #expect(peers.chunksHeld == 1 && peers[3 * size + 1] == "10.0.0.5" && peers[3 * size] == nil)
    }

    /// A client from `source`, and the descriptor whose slot held its key during its upgrade
    /// (found between its TCP connect and its request; nil if it never did).
    private static func client(from source: String, in harness: TransportHarness) throws -> (WebSocketClient, Noted) {
        let noted = Noted()
        var options = WebSocketClient.Options()
        options.sourceAddress = source
        options.afterConnecting = {
            // Within two seconds the server accepts it (an earlier connection from the same
            // address, closed, holds no slot).
            for _ in 0..<200 where noted.value == nil {
                noted.value = harness.onServiceThread { Self.descriptor(holding: source, in: $0) }
                if noted.value == nil { Thread.sleep(forTimeInterval: 0.01) }
            }
        }
        return (try harness.client(options), noted)
    }

    /// A descriptor noted from the client's `afterConnecting`, which runs on the test's thread.
    private final class Noted: @unchecked Sendable {
        var value: Int32?
    }

    /// An HTTP connection (a plain `GET`, no upgrade: only `LWS_CALLBACK_CLOSED_HTTP` can empty
    /// its slot) empties its slot when it closes.
    @Test func anHTTPConnectionEmptiesItsSlotWhenItCloses() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        var options = WebSocketClient.Options()
        options.sourceAddress = "127.0.0.96"
        let answer = try WebSocketClient.plainGET("/healthz", port: harness.port, options: options)
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        #expect(harness.recorder.snapshot.askedAtAccept.contains("127.0.0.96"))
        #expect(Self.slotEmpties(holding: "127.0.0.96", in: harness), "the closed connection's slot still holds its address")
    }

    /// A connection lws drops itself, with no WebSocket connection made (the peer closed before
    /// a whole request arrived; headers over lws' limit, `maxHTTPHeaderBytes`; a handshake lws
    /// refuses after the upgrade's checks, without a key), empties its slot: lws 4.1 reports its close
    /// (`LWS_CALLBACK_CLOSED_HTTP`, `LWS_CALLBACK_CLOSED`) while the descriptor is open.
    @Test(arguments: [
        (1, ""),
        (2, "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgr"),
        (3, "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Protocol: panes.v1\r\nSec-WebSocket-Version: 13\r\n\r\n"),
        (4, "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nX-Filler: \(String(repeating: "a", count: 8_000))\r\n\r\n"),
    ])
    func aConnectionLwsDropsItselfEmptiesItsSlot(_ index: Int, _ sent: String) throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        var options = WebSocketClient.Options()
        let source = "127.0.0.\(96 + index)"
        options.sourceAddress = source
        let request = sent.replacingOccurrences(of: "PORT", with: "\(harness.port)")
        try WebSocketClient.connectSendAndClose(Array(request.utf8), port: harness.port, options: options)
        #expect(harness.recorder.wait { $0.askedAtAccept.contains(source) })
        #expect(Self.slotEmpties(holding: source, in: harness), "the dropped connection's slot still holds its address")
        #expect(harness.recorder.snapshot.opened.isEmpty)
    }

    /// Whether, within two seconds, no slot holds `key` (the server empties it on its thread).
    private static func slotEmpties(holding key: String, in harness: TransportHarness) -> Bool {
        for _ in 0..<200 {
            if harness.onServiceThread({ Self.descriptor(holding: key, in: $0) }) == nil { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// The descriptor whose slot holds `key` (scanned: the table is indexed by descriptor).
    private static func descriptor(holding key: String, in server: WebSocketServer) -> Int32? {
        (0..<Int32(65_536)).first { server.acceptedPeers[$0] == key }
    }
}
