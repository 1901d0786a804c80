import PanesTransport
import Testing

/// Who a connection counts as for the limit on failed authentications.
@Suite struct PeerAddressTests {
    @Test func addressesAreNormalisedAndIPv6CountsByItsSlash64() {
        #expect(PeerAddress.normalized("10.0.0.7") == "10.0.0.7")
        #expect(PeerAddress.normalized(" 10.0.0.7 ") == "10.0.0.7")
        #expect(PeerAddress.normalized("::ffff:10.0.0.7") == "10.0.0.7")
        #expect(PeerAddress.normalized("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(PeerAddress.normalized("2001:0db8:0001:0002:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64")
        #expect(PeerAddress.normalized("not an address") == nil)
        #expect(PeerAddress.normalized("10.0.0.7:8080") == nil)
        #expect(PeerAddress.normalized("10.0.0.0") == "10.0.0.0")
        #expect(PeerAddress.normalized("100.200.0.1") == "100.200.0.1")
        #expect(PeerAddress.normalized("\t10.0.0.7 ") == "10.0.0.7")
        #expect(PeerAddress.normalized(" ") == nil)
    }

    @Test func onlyATrustedProxysForwardedForIsBelieved() {
        let trusted: Set<String> = ["10.0.0.2", "10.0.0.3"]
        #expect(PeerAddress.client(socketPeer: "10.0.0.2", forwardedFor: "203.0.113.9", trustedProxies: trusted) == "203.0.113.9")
        #expect(PeerAddress.client(socketPeer: "10.0.0.9", forwardedFor: "203.0.113.9", trustedProxies: trusted) == "10.0.0.9",
                "an untrusted peer's header is ignored")
        #expect(PeerAddress.client(socketPeer: "10.0.0.2", forwardedFor: nil, trustedProxies: trusted) == "10.0.0.2")
        // The client wrote the left part itself; the trusted proxies appended the rest.
        #expect(PeerAddress.client(socketPeer: "10.0.0.2", forwardedFor: "1.2.3.4, 203.0.113.9, 10.0.0.3",
                                   trustedProxies: trusted) == "203.0.113.9")
        #expect(PeerAddress.client(socketPeer: "10.0.0.2", forwardedFor: "junk, 203.0.113.9", trustedProxies: trusted) == "203.0.113.9")
        #expect(PeerAddress.client(socketPeer: "10.0.0.2", forwardedFor: "203.0.113.9, junk", trustedProxies: trusted) == "10.0.0.2",
                "what the proxy appended is not an address: the proxy counts")
    }
}
