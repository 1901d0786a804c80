import PanesTransport
import Testing

#if canImport(Glibc)
import Glibc
#endif

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

    /// What accept returned, as bytes: the same key as the address's text gives.
    @Test func anAddressAsBytesHasTheKeyItsTextHas() {
        func key(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { PeerAddress.key(address: $0) } }
        #expect(key([10, 0, 0, 7]) == "10.0.0.7")
        #expect(key([0, 0, 0, 0]) == "0.0.0.0")
        #expect(key([255, 255, 255, 255]) == "255.255.255.255")
        #expect(key([100, 20, 3, 199]) == "100.20.3.199")
        #expect(key([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 7]) == "10.0.0.7")
        #expect(key([0x20, 0x01, 0x0D, 0xB8, 0, 1, 0, 2, 0xAA, 0xAA, 0, 0, 0, 0, 0, 1]) == "2001:db8:1:2::/64")
        #expect(key([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]) == PeerAddress.normalized("::1"))
        #expect(key([]) == nil)
        #expect(key([1, 2, 3]) == nil)
        // Every octet, in every position, as inet_ntop writes it.
        for octet in 0...255 {
            for position in 0..<4 {
                var bytes: [UInt8] = [192, 0, 2, 1]
                bytes[position] = UInt8(octet)
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                bytes.withUnsafeBytes { _ = inet_ntop(AF_INET, $0.baseAddress, &text, socklen_t(text.count)) }
                let written = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                #expect(key(bytes) == written)
                #expect(PeerAddress.normalized(written) == written)
            }
        }
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
