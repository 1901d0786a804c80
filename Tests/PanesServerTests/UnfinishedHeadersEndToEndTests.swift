import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// The caps on connections still sending their headers, on the real binary: the settings reach
/// the transport, and `/metrics` tells them.
@Suite struct UnfinishedHeadersEndToEndTests {
    /// Two slow senders from one address fill its cap (`maxConnectionsInHeadersPerAddress`, 2
    /// here); its third connection is closed at accept and counted by reason, while a window
    /// from another address (the test's own, 127.0.0.1) connects and `/metrics` answers.
    @Test func aSlowAddressPastItsCapIsRefusedAndCountedWhileAWindowConnects() throws {
        let server = try ServerProcess(config: ["settings": ["maxConnectionsInHeadersPerAddress": 2]])
        let slow = try (0..<2).map { _ in
            let client = try HTTPClient(port: server.port, sourceAddress: "127.0.0.5")
            #expect(client.write(Array("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nUpgr".utf8)))
            return client
        }
        #expect(try eventually(timeout: 20) {
            try server.http("/metrics").body.contains("\npanes_connections_in_headers 2\n")
        }, "the slow connections were not counted")
        let refused = try HTTPClient(port: server.port, sourceAddress: "127.0.0.5")
        #expect(refused.closedByServer(timeout: 10), "a third connection from the address was kept")

        let window = try server.client()
        #expect(window.connect()["session"] != nil)
        let metrics = try server.http("/metrics").body
        #expect(metrics.contains(#"panes_connections_refused_in_headers_total{reason="per_address"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"panes_connections_refused_in_headers_total{reason="total"} 0"#), "\(metrics)")
        #expect(metrics.contains("\npanes_connections_in_headers 2\n"), "\(metrics)")
        withExtendedLifetime(slow) {}
    }
}
