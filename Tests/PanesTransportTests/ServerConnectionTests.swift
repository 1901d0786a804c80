@testable import PanesTransport
import Testing

/// glibc's `malloc_usable_size` (in `<malloc.h>`, which the Glibc module leaves out): the
/// bytes of the chunk an object was given, which is what the heap pays for it.
@_silgen_name("malloc_usable_size") private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) -> Int

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

    /// Every idle scene holds one: 152 bytes (a 160-byte malloc chunk) with five one-byte flags,
    /// two 64-bit counters and a copy of the peer's address; 120 (a 128-byte chunk) with the
    /// flags in one byte, the counters 32 bits and the address left to the delegate; 104 (a
    /// 112-byte chunk) with the close asked for out of line and the idle list named by a byte.
    /// glibc tells the chunk's usable size, which is what the heap pays.
    @Test func aConnectionFitsA112ByteChunk() {
        let connection = connection()
        let usable = mallocUsableSize(Unmanaged.passUnretained(connection).toOpaque())
        #expect(usable <= 104)
    }

    @Test func theFlagsAreIndependentAndTheGatheredCountSaturates() {
        let connection = connection()
        connection.pingWanted = true
        connection.closeStarted = true
        #expect(connection.pingWanted && connection.closeStarted)
        #expect(!connection.peerClosed && !connection.readingPaused && !connection.waitingToClose && !connection.closed)
        connection.waitingToClose = true
        connection.pingWanted = false
        #expect(!connection.pingWanted && connection.closeStarted && connection.waitingToClose)
        connection.closed = true
        #expect(connection.closed && connection.closeStarted && connection.waitingToClose && !connection.peerClosed)
        connection.gatheredBytes = 16 << 20
        connection.gatheredBytes += 5
        #expect(connection.gatheredBytes == (16 << 20) + 5)
        connection.gatheredBytes = Int(UInt32.max) + 10
        #expect(connection.gatheredBytes == Int(UInt32.max))
    }

    @Test func theQueuePopsInOrderPastItsCompaction() {
        var queue = FrameQueue()
        var frames: [OutboundFrame] = []
        for index in 0..<3000 {
            let frame = OutboundFrame(text: "\(index)")
            frames.append(frame)
            queue.push(frame)
        }
        for index in 0..<3000 {
            #expect(queue.count == 3000 - index)
            guard let frame = queue.pop() else { Issue.record("empty at \(index)"); return }
            #expect(frame === frames[index])
        }
        #expect(queue.isEmpty && queue.pop() == nil)
    }
}
