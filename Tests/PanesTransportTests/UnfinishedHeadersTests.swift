import Foundation
import PanesTestSupport
@testable import PanesTransport
import Testing

/// The caps on connections still sending their headers: the count by itself, then the real
/// server over real sockets (slow senders from one loopback address, others from another).
@Suite struct UnfinishedHeadersTests {
    // MARK: The count

    @Test func aConnectionPastEitherCapIsRefusedAndCounted() {
        var headers = UnfinishedHeaders(maxTotal: 3, maxPerAddress: 2)
        for descriptor: Int32 in [10, 11] {
            #expect(headers.admit(descriptor, key: "10.0.0.1") == nil)
            headers.adopted(descriptor)
        }
        #expect(headers.admit(12, key: "10.0.0.1") == .perAddress)
        // lws adopts nothing the filter closed.
        headers.adopted(12)
        #expect(headers.count == 2 && headers.counted(from: "10.0.0.1") == 2)
        // Another address, and a socket with none, still get in, up to the total.
        #expect(headers.admit(13, key: "10.0.0.2") == nil)
        headers.adopted(13)
        #expect(headers.admit(14, key: nil) == .total)
        #expect(headers.refusedTotal == 1 && headers.refusedPerAddress == 1)
        // Headers whole: room again.
        headers.finished(10)
        #expect(headers.count == 2 && headers.counted(from: "10.0.0.1") == 1)
        #expect(headers.admit(14, key: "10.0.0.1") == nil)
        headers.adopted(14)
        #expect(headers.counted(from: "10.0.0.1") == 2)
    }

    /// Counts by address are kept only from half the per-address cap in all (below it no address
    /// can be at its cap, and an accept hashes nothing), tallied from the connections counted
    /// when they start, and dropped under a quarter: the cap holds across both.
    @Test func countsByAddressAreKeptOnlyFromHalfThePerAddressCap() {
        var headers = UnfinishedHeaders(maxTotal: 100, maxPerAddress: 8)
        var next: Int32 = 60
        func connect(_ key: String) -> UnfinishedHeaders.Refusal? {
            next += 1
            let refusal = headers.admit(next, key: key)
            headers.adopted(next)
            return refusal
        }
        for key in ["10.0.0.1", "10.0.0.2", "10.0.0.1"] { #expect(connect(key) == nil) }
        #expect(!headers.tallying)
        #expect(connect("10.0.0.1") == nil)
        #expect(headers.tallying && headers.counted(from: "10.0.0.1") == 3 && headers.counted(from: "10.0.0.2") == 1)
        for _ in 0..<5 { #expect(connect("10.0.0.1") == nil) }
        #expect(connect("10.0.0.1") == .perAddress)
        #expect(connect("10.0.0.2") == nil)
        // Down to a quarter (2) the counts are kept; under it they are dropped, and the next
        // connections past half are tallied again with them.
        for descriptor in Int32(61)...Int32(66) { headers.finished(descriptor) }
        #expect(headers.count == 4 && headers.tallying)
        for descriptor in Int32(67)...Int32(68) { headers.finished(descriptor) }
        #expect(headers.count == 2 && headers.tallying)
        headers.finished(71)
        #expect(headers.count == 1 && !headers.tallying && headers.counted(from: "10.0.0.1") == 1)
        for _ in 0..<7 { #expect(connect("10.0.0.1") == nil) }
        #expect(headers.tallying && headers.counted(from: "10.0.0.1") == 8)
        #expect(connect("10.0.0.1") == .perAddress)
        #expect(headers.refusedPerAddress == 2)
    }

    /// A socket the filter let through but lws closed without adopting it (no callback follows
    /// the filter then) never counts; an adoption of a descriptor the filter did not see last
    /// counts nothing.
    @Test func onlyTheSocketTheFilterLetThroughLastCountsWhenAdopted() {
        var headers = UnfinishedHeaders(maxTotal: 10, maxPerAddress: 10)
        #expect(headers.admit(20, key: "10.0.0.1") == nil)
        #expect(headers.admit(21, key: "10.0.0.2") == nil)
        headers.adopted(21)
        headers.adopted(20)
        #expect(headers.count == 1 && headers.counted(from: "10.0.0.1") == 0 && headers.counted(from: "10.0.0.2") == 1)
    }

    /// Ending twice (headers whole, then the close) counts once; a descriptor never counted
    /// changes nothing; an address whose last connection ends is forgotten.
    @Test func eachConnectionEndsOnce() {
        var headers = UnfinishedHeaders(maxTotal: 10, maxPerAddress: 10)
        #expect(headers.admit(30, key: "10.0.0.1") == nil)
        headers.adopted(30)
        headers.finished(30)
        headers.finished(30)
        headers.finished(31)
        #expect(headers.count == 0 && headers.counted(from: "10.0.0.1") == 0)
    }

    /// A descriptor still counted when lws adopts a new socket on it was closed without a
    /// callback: the new connection replaces the old one instead of adding to it, so a missed
    /// close cannot hold a cap's place for good.
    @Test func aReusedDescriptorEndsWhatItCountedBefore() {
        var headers = UnfinishedHeaders(maxTotal: 10, maxPerAddress: 10)
        #expect(headers.admit(40, key: "10.0.0.1") == nil)
        headers.adopted(40)
        #expect(headers.admit(40, key: "10.0.0.2") == nil)
        headers.adopted(40)
        #expect(headers.count == 1 && headers.counted(from: "10.0.0.1") == 0 && headers.counted(from: "10.0.0.2") == 1)
    }

    /// A kept-alive connection reading its next request counts again, past the caps too (it is
    /// open already), until its headers are whole.
    @Test func aKeptAliveConnectionCountsAgainUntilItsNextHeadersAreWhole() {
        var headers = UnfinishedHeaders(maxTotal: 1, maxPerAddress: 1)
        #expect(headers.admit(50, key: "10.0.0.1") == nil)
        headers.adopted(50)
        headers.finished(50)
        headers.readingAgain(50, key: "10.0.0.1")
        headers.readingAgain(51, key: "10.0.0.1")
        #expect(headers.count == 2 && headers.counted(from: "10.0.0.1") == 2)
        #expect(headers.admit(53, key: "10.0.0.3") == .total)
        headers.finished(50)
        headers.finished(51)
        #expect(headers.count == 0 && headers.counted(from: "10.0.0.1") == 0)
    }

    // MARK: The server, over real sockets

    /// One address opens as many connections as its cap allows, each sending part of a request
    /// and waiting (slowloris); its next is closed as it is accepted, unread, and counted, while a
    /// WebSocket from another address opens as before. Once the slow ones finish their headers
    /// (and are answered), that address is let in again. Without the cap the refused one was
    /// held open (until `httpHeaderTimeoutMs`, 21 s).
    @Test func aSlowAddressPastItsCapIsClosedAtAcceptWhileAnotherConnects() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(
            maxConnectionsInHeaders: 100, maxConnectionsInHeadersPerAddress: 3))
        let slow = try (0..<3).map { _ in try Self.slowSender(from: "127.0.0.61", harness) }
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 3 }, "the slow connections were not all counted")

        let refused = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.61")
        #expect(refused.closedByServer(timeout: 5), "a fourth connection from the address was kept")
        #expect(harness.onServiceThread { $0.connectionsRefusedInHeaders.perAddress } == 1)
        #expect(harness.onServiceThread { $0.connectionsRefusedInHeaders.total } == 0)

        var options = WebSocketClient.Options()
        options.sourceAddress = "127.0.0.62"
        let other = try harness.client(options)
        #expect(harness.recorder.wait { $0.opened.count == 1 })
        #expect(harness.recorder.snapshot.openedPeers == ["127.0.0.62"])
        // Its headers are whole: it no longer counts.
        #expect(Self.inHeaders(harness) == 3)

        for client in slow {
            #expect(client.write(Self.slowEnd))
            #expect(try client.readResponse().status == 200)
        }
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 0 })
        let again = try (0..<3).map { _ in try Self.slowSender(from: "127.0.0.61", harness) }
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 3 }, "the address was not let in again")
        #expect(harness.onServiceThread { $0.connectionsRefusedInHeaders.perAddress } == 1)
        withExtendedLifetime((other, again)) {}
    }

    /// Slow senders from many addresses fill the total: the next connection is closed at
    /// accept whatever its address, and counted as such.
    @Test func slowSendersFromManyAddressesFillTheTotal() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(
            maxConnectionsInHeaders: 3, maxConnectionsInHeadersPerAddress: 100))
        let slow = try (1...3).map { try Self.slowSender(from: "127.0.0.7\($0)", harness) }
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 3 })
        let refused = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.74")
        #expect(refused.closedByServer(timeout: 5), "a connection past the total was kept")
        #expect(harness.onServiceThread { $0.connectionsRefusedInHeaders.total } == 1)
        #expect(harness.onServiceThread { $0.connectionsRefusedInHeaders.perAddress } == 0)
        // One finishes: room for one more.
        #expect(slow[0].write(Self.slowEnd))
        #expect(try slow[0].readResponse().status == 200)
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 2 })
        let next = try Self.slowSender(from: "127.0.0.74", harness)
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 3 }, "a connection was refused with room under the total")
        withExtendedLifetime((slow, next)) {}
    }

    /// Slow senders the header timeout closes give their places back. (lws's poll loop, whose
    /// timers fire when due; see `aConnectionThatDoesNotFinishItsHeadersInTheHeaderTimeoutIsClosed`.)
    @Test func slowSendersTimedOutGiveTheirPlacesBack() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(
            eventLoop: .poll, httpHeaderTimeoutMilliseconds: 1_000, maxConnectionsInHeaders: 100,
            maxConnectionsInHeadersPerAddress: 2))
        let slow = try (0..<2).map { _ in try Self.slowSender(from: "127.0.0.81", harness) }
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 2 })
        let refused = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.81")
        #expect(refused.closedByServer(timeout: 5), "a third connection from the address was kept")
        for client in slow { #expect(client.closedByServer(timeout: 8), "the header timeout did not close it") }
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 0 })
        let again = try Self.slowSender(from: "127.0.0.81", harness)
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 1 }, "the address was not let in again")
        #expect(harness.onServiceThread { $0.connectionsRefusedInHeaders.perAddress } == 1)
        withExtendedLifetime(again) {}
    }

    /// A kept-alive HTTP connection whose answer is out is reading its next request's headers:
    /// it counts again (a client could otherwise send one quick request, then the next one a
    /// byte at a time, uncounted), until that request is whole.
    @Test func aKeptAliveConnectionCountsWhileItReadsItsNextRequest() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(
            maxConnectionsInHeaders: 100, maxConnectionsInHeadersPerAddress: 1))
        let client = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.91")
        #expect(try client.send("GET", "/healthz").status == 200)
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 1 }, "the kept-alive connection did not count")
        let refused = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.91")
        #expect(refused.closedByServer(timeout: 5), "a second connection from the address was kept")
        #expect(try client.send("GET", "/healthz", headers: [("Connection", "close")]).status == 200)
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 0 })
    }

    /// A request lws answers itself from the web root (a `HEAD` of a file, a 304 for the ETag
    /// the client has, a 415 for a file of no known type) tells Panes nothing when its answer
    /// is out, and a kept-alive connection then reads its next request: the connection counts
    /// from accept through all of it, so its next request, sent a byte at a time, is capped.
    /// (Counted only until its headers were read, it was uncounted from then on, and one
    /// address could again hold every descriptor.)
    @Test(arguments: ["head", "notModified", "unknownType"])
    func aKeptAliveConnectionLwsAnsweredItselfStillCounts(_ answer: String) throws {
        let root = try Self.webRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let harness = try TransportHarness(configuration: TransportConfiguration(
            webRoot: root, maxConnectionsInHeaders: 100, maxConnectionsInHeadersPerAddress: 1))
        let client = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.92")
        switch answer {
        case "head":
            #expect(client.write(HTTPClient.request("HEAD", "/f.html", port: harness.port)))
            #expect(try client.readResponse(headOnly: true).status == 200)
        case "notModified":
            let etag = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.93")
                .send("GET", "/f.html", headers: [("Connection", "close")]).headers["etag"]
            #expect(etag != nil)
            #expect(client.write(HTTPClient.request("GET", "/f.html", port: harness.port, headers: [("If-None-Match", etag ?? "")])))
            #expect(try client.readResponse(headOnly: true).status == 304)
        default:
            #expect(try client.send("GET", "/f.unknownkind").status == 415)
        }
        // The next request, begun and left unfinished.
        #expect(client.write(Array("GET /f.html HTTP/1.1\r\nHost: 127.0.0.1:\(harness.port)\r\nX-Slow: ".utf8)))
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 1 }, "the kept-alive connection did not count")
        let refused = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.92")
        #expect(refused.closedByServer(timeout: 5), "a second connection from the address was kept")
        #expect(harness.onServiceThread { $0.connectionsRefusedInHeaders.perAddress } == 1)
        withExtendedLifetime(client) {}
    }

    /// An upgrade refused on a kept-alive connection empties its slot of the address noted at
    /// accept (lws tells no close for it); lws keeps the connection for another request, which
    /// counts under the address the socket gives, not under none (where one address could fill
    /// the total by itself).
    @Test func aKeptAliveConnectionAfterARefusedUpgradeCountsUnderItsAddress() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(
            maxConnectionsInHeaders: 100, maxConnectionsInHeadersPerAddress: 1))
        let client = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.94")
        #expect(try client.send("GET", "/healthz").status == 200)
        #expect(try client.send("GET", "/other", headers: [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                                                            ("Sec-WebSocket-Version", "13")]).status == 404)
        #expect(try client.send("GET", "/healthz").status == 200)
        #expect(client.write(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(harness.port)\r\nX-Slow: ".utf8)))
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 1 })
        #expect(harness.onServiceThread { $0.unfinishedHeaders.counted(from: "127.0.0.94") } == 1)
        let refused = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.94")
        #expect(refused.closedByServer(timeout: 5), "a second connection from the address was kept")
        withExtendedLifetime(client) {}
    }

    /// lws makes a raw socket of a `CONNECT` request, with no timeout: Panes serves none, so it
    /// is closed and gives its place back (it was held until the peer left, for ever if it never
    /// did).
    @Test func aConnectRequestIsClosed() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        let client = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.95")
        #expect(client.write(Array("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n".utf8)))
        #expect(client.closedByServer(timeout: 5), "the raw socket was kept")
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 0 }, "a connection still counts")
    }

    /// However a connection's headers end (an upgrade accepted or refused, by Panes or by lws; a
    /// plain request answered; headers over lws's limit; a request lws cannot parse; the peer
    /// gone halfway), it stops counting: no place is held after it.
    @Test(arguments: [
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: panes.v1\r\nSec-WebSocket-Version: 13\r\n\r\n",
        "GET /other HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nUpgrade: something\r\nConnection: Upgrade\r\n\r\n",
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Protocol: panes.v1\r\nSec-WebSocket-Version: 13\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nConnection: close\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nX-Filler: \(String(repeating: "a", count: 8_000))\r\n\r\n",
        "NONSENSE\r\n\r\n",
        "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgr",
    ])
    func everyWayHeadersEndGivesThePlaceBack(_ request: String) throws {
        let harness = try TransportHarness(configuration: TransportConfiguration())
        let client = try HTTPClient(port: harness.port, sourceAddress: "127.0.0.99")
        #expect(client.write(Array(request.replacingOccurrences(of: "PORT", with: "\(harness.port)").utf8)))
        if request.hasSuffix("Upgr") {
            #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 1 })
            client.close()
        } else {
            // An answer or a close: the server has taken the connection (a count of 0 checked
            // before it was accepted would prove nothing).
            #expect(client.hasData(within: 10), "the server neither answered nor closed")
        }
        #expect(eventually(timeout: 10) { Self.inHeaders(harness) == 0 }, "a connection still counts")
        #expect(harness.onServiceThread { $0.unfinishedHeaders.counted(from: "127.0.0.99") } == 0)
        withExtendedLifetime(client) {}
    }

    /// A trusted proxy stands for many clients (whose addresses are in headers not read yet, and
    /// never believed for this cap): its connections count in the total only. Any other address,
    /// whatever it may later claim in `X-Forwarded-For`, is capped as the socket gives it.
    @Test func aTrustedProxyIsCappedInTheTotalOnly() throws {
        let harness = try TransportHarness(configuration: TransportConfiguration(
            trustedProxies: ["10.0.0.2"], maxConnectionsInHeaders: 4, maxConnectionsInHeadersPerAddress: 1))
        let outcomes = harness.onServiceThread { server -> [Bool] in
            let descriptors: [Int32] = [60_010, 60_011, 60_012, 60_013, 60_014, 60_015]  // far above any this process opens
            defer {
                for descriptor in descriptors {
                    server.unfinishedHeaders.finished(descriptor)
                    server.acceptedPeers[descriptor] = nil
                }
            }
            var closed: [Bool] = []
            for (descriptor, address) in zip(descriptors, [[10, 0, 0, 2], [10, 0, 0, 2], [10, 0, 0, 3], [10, 0, 0, 3], [10, 0, 0, 2], [10, 0, 0, 2]] as [[UInt8]]) {
                let closes = address.withUnsafeBytes { server.closesAccepted(descriptor: descriptor, address: $0) }
                if !closes { server.acceptedPeers.adopted(descriptor); server.unfinishedHeaders.adopted(descriptor) }
                closed.append(closes)
            }
            return closed
        }
        // The proxy twice, past the per-address cap; another address once, then past its cap;
        // the proxy again, which fills the total (4); then the total refuses the proxy too.
        #expect(outcomes == [false, false, false, true, false, true])
        #expect(harness.onServiceThread { $0.connectionsRefusedInHeaders.perAddress } == 1)
        #expect(harness.onServiceThread { $0.connectionsRefusedInHeaders.total } == 1)
        #expect(Self.inHeaders(harness) == 0)
    }

    // MARK: Helpers

    /// A connection from `source` that has sent the start of a request and waits.
    private static func slowSender(from source: String, _ harness: TransportHarness) throws -> HTTPClient {
        let client = try HTTPClient(port: harness.port, sourceAddress: source)
        #expect(client.write(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(harness.port)\r\nX-Slow: ".utf8)))
        return client
    }

    /// A web root for lws to serve: one page, and one file of a type lws does not know.
    private static func webRoot() throws -> String {
        let root = NSTemporaryDirectory() + "panes-headers-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try Data("<p>f</p>\n".utf8).write(to: URL(fileURLWithPath: root + "/f.html"))
        try Data("f\n".utf8).write(to: URL(fileURLWithPath: root + "/f.unknownkind"))
        return root
    }

    /// The rest of a slow sender's request.
    private static let slowEnd = Array("1\r\nConnection: close\r\n\r\n".utf8)

    private static func inHeaders(_ harness: TransportHarness) -> Int {
        harness.onServiceThread { $0.connectionsInHeaders }
    }
}
