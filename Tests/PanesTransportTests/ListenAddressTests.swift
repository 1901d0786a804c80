import PanesTestSupport
@testable import PanesTransport
import Testing

/// The address the server listens on is an IPv4 address exactly as the OS reads one.
@Suite struct ListenAddressTests {
    @Test(arguments: ["127.0.0.1", "0.0.0.0", "127.0.0.2", "10.1.2.3", "192.0.2.1", "255.255.255.255"])
    func anIPv4AddressIsOne(_ text: String) {
        #expect(ListenAddress.isIPv4(text))
    }

    /// Leading zeros (which lws would not bind as written), short forms, IPv6, names, spaces,
    /// hex, and a NUL after an address (C would read only the address).
    @Test(arguments: ["127.0.0.01", "0127.0.0.1", "00.0.0.0", "1.2.3", "127.1", "1.2.3.4.5", "127.0.0.256", "::1",
                      "[::1]", "::ffff:127.0.0.1", "localhost", "lo", "", " 127.0.0.1", "127.0.0.1 ", "0x7f.0.0.1",
                      "127.0.0.1\u{0}junk", "１２７.0.0.1"])
    func anythingElseIsNot(_ text: String) {
        #expect(!ListenAddress.isIPv4(text))
    }

    /// Loopback only: every address of 127.0.0.0/8, which Linux answers on `lo` alone.
    @Test(arguments: ["127.0.0.1", "127.0.0.2", "127.0.0.0", "127.255.255.255", "127.1.2.3"])
    func anAddressIn127Slash8IsLoopback(_ text: String) {
        #expect(ListenAddress.isLoopback(text))
    }

    /// Not loopback: other addresses (every interface, too), and what is not a listen address
    /// here at all, `::1` and `localhost` included (the server would not listen there).
    @Test(arguments: ["0.0.0.0", "128.0.0.1", "126.255.255.255", "10.0.0.1", "192.168.1.10", "::1", "[::1]",
                      "localhost", "LOCALHOST", "localhost.", "127.1", "127.0.0.01", "127.x.y.z", "127.", ""])
    func anythingElseIsNotLoopback(_ text: String) {
        #expect(!ListenAddress.isLoopback(text))
    }

    /// The transport itself refuses to start on one, whatever built its configuration: lws given
    /// `::1` listened on every IPv4 address, and given a name on none.
    @Test(arguments: ["::1", "localhost", "127.0.0.01"])
    func theTransportDoesNotStartOnAnythingElse(_ host: String) {
        #expect {
            _ = try TransportHarness(configuration: TransportConfiguration(host: host))
        } throws: { error in
            "\(error)" == "could not listen on \(host):0: not an IPv4 address (Panes listens on IPv4 only)"
        }
    }
}
