@testable import PanesTransport
import Testing

/// `Sec-WebSocket-Protocol` is read as comma-separated items with spaces and tabs taken out;
/// an all-ASCII header byte by byte, anything else character by character, with one outcome.
@Suite struct SubprotocolOfferTests {
    @Test(arguments: ["panes.v1", "chat, panes.v1", " panes.v1 \t", ",,panes.v1,,", "pa nes.v1", "é, panes.v1"])
    func anOfferNamingTheSubprotocolIsAccepted(_ header: String) {
        #expect(WebSocketServer.offers(header, "panes.v1"))
    }

    @Test(arguments: ["", ",", "panes.v2", "panes.v1x", "xpanes.v1", "panes.v1;q=1", "PANES.V1",
                      // A prepended mark joins the comma into one character: no item boundary there.
                      "x\u{600},panes.v1"])
    func anOfferNotNamingItIsRefused(_ header: String) {
        #expect(!WebSocketServer.offers(header, "panes.v1"))
    }
}
