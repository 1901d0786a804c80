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
}
