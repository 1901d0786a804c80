@testable import PanesTransport
import Testing

/// `ServerConnection` keeps both kinds of close in one field: each reads back as it was set,
/// a close now asked after a close after flushing is what `writeNext` sends, and the earlier
/// one still counts as asked for (`writeNext` asks for another turn while it is set).
@Suite struct ServerConnectionTests {
    func connection() -> ServerConnection {
        // Never handed to lws here: the pointer is only stored.
        ServerConnection(id: 1, wsi: OpaquePointer(bitPattern: 0x10)!, now: 5)
    }

    @Test func aCloseAfterFlushingReadsBackAndIsNotACloseNow() {
        let connection = connection()
        #expect(!connection.closing && connection.closeAfterFlush == nil && connection.closeNow == nil)
        connection.closeAfterFlush = (1001, "going away")
        #expect(connection.closing && connection.closeNow == nil)
        #expect(connection.closeAfterFlush?.code == 1001 && connection.closeAfterFlush?.reason == "going away")
    }

    @Test func aCloseNowReadsBackAndIsNotACloseAfterFlushing() {
        let connection = connection()
        connection.closeNow = (1008, "policy")
        #expect(connection.closing && connection.closeAfterFlush == nil)
        #expect(connection.closeNow?.code == 1008 && connection.closeNow?.reason == "policy")
    }

    @Test func aCloseNowAfterACloseAfterFlushingWinsAndBothStayAsked() {
        let connection = connection()
        connection.closeAfterFlush = (1001, "going away")
        connection.closeNow = (1009, "too big")
        #expect(connection.closing && connection.closeAfterFlush != nil)
        #expect(connection.closeNow?.code == 1009 && connection.closeNow?.reason == "too big")
    }

    @Test func whenItsCloseWasAskedIsKeptWhereItWasLastHeard() {
        let connection = connection()
        #expect(connection.lastHeard == 5)
        connection.closeRequestedAt = 40
        #expect(connection.closeRequestedAt == 40 && connection.lastHeard == 40)
    }
}
