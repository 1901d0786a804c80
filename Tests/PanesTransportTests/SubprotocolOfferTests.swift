@testable import PanesTransport
import Testing

/// `Sec-WebSocket-Protocol` is read as comma-separated items with spaces and tabs taken out, by
/// its bytes (HTTP's header is bytes; Swift's characters would join a comma with a mark before it).
@Suite struct SubprotocolOfferTests {
    @Test(arguments: ["panes.v1", "chat, panes.v1", " panes.v1 \t", ",,panes.v1,,", "pa nes.v1", "é, panes.v1",
                      // A prepended concatenation mark would join the comma into one Character;
                      // as bytes the comma still ends the item.
                      "x\u{600},panes.v1"])
    func anOfferNamingTheSubprotocolIsAccepted(_ header: String) {
        #expect(Self.offers(header, "panes.v1"))
    }

    @Test(arguments: ["", ",", "panes.v2", "panes.v1x", "xpanes.v1", "panes.v1;q=1", "PANES.V1",
                      "panes.v1\u{301}", "pane\u{301}s.v1"])
    func anOfferNotNamingItIsRefused(_ header: String) {
        #expect(!Self.offers(header, "panes.v1"))
    }

    /// An offer that is exactly the name is taken whole, without the walk; a name with a byte
    /// the walk splits or trims at is never matched by it, whole or not.
    @Test func anOfferThatIsTheNameAloneIsAcceptedAndANameWithASeparatorNever() {
        #expect(Self.offers("panes.v1", "panes.v1"))
        #expect(Self.offers("p", "p"))
        // An empty name is offered by no header, the empty one included (the walk's answer).
        #expect(!Self.offers("", ""))
        #expect(!Self.offers(",", ""))
        for name in ["pa nes", "pa,nes", "pa\tnes"] {
            #expect(!Self.offers(name, name), "\(name)")
        }
    }

    /// The server's check (`WebSocketServer.offers`) on the header's bytes, as lws hands them over.
    private static func offers(_ header: String, _ subprotocol: String) -> Bool {
        var header = header
        return header.withUTF8 { WebSocketServer.offers(UnsafeRawBufferPointer($0), Array(subprotocol.utf8)) }
    }
}
