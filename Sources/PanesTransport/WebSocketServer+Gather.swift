// Threading: the service thread's, like every other write.
internal import CLibWebSockets

/// Writing what one callback sends to a connection with one system call.
///
/// A busy document's turn sends each of its scenes several frames (every operation of a batch,
/// and the acknowledgements); one `send` per frame per scene was most of a node's CPU. Frames
/// that could go to the socket at once are gathered instead, and at the end of the callback
/// (or timer) that produced them each connection's are written together: one frame as lws
/// frames it, several as complete WebSocket frames made here and written raw. That is only done
/// where lws adds nothing to a frame but its header: no extension (permessage-deflate
/// compresses each message), and WebSocket over HTTP/1.1 (this server speaks no HTTP/2).
///
/// What lws holds of a connection's writes stays what it was: the first frame (of any size)
/// as before, and others only while all together stay within `maxCoalescedWriteBytes`; the
/// rest waits in the connection's queue, where `maxOutboundQueue` bounds a reader that does
/// not keep up.
extension WebSocketServer {
    func gather(_ frame: OutboundFrame, for connection: ServerConnection) {
        if connection.gathered.isEmpty {
            gathering.append(connection)
            anyGathered = true
            connection.gatheredBytes = 0
        }
        connection.gathered.append(frame)
        connection.gatheredBytes += frame.payloadCount
    }

    /// Writes every connection's gathered frames. Called as each lws callback and each timer
    /// of ours returns.
    func flushGathered() {
        guard anyGathered else { return }
        anyGathered = false
        // Taken, not emptied in place: the copy shares the buffer, so emptying it and keeping
        // its capacity would allocate another as large. A connection whose writes are done
        // holds no buffer (an idle scene kept one frame's, 48 bytes, of its `connect` reply).
        let pending = gathering
        gathering = []
        for connection in pending {
            let frames = connection.gathered
            connection.gathered = []
            // Gone, or closing at once (`closeSoon` drops what is waiting): nothing to write. A
            // close after what was sent (`close`) is written after these, from WRITEABLE.
            guard !frames.isEmpty, connection.closeNow == nil, !connection.closed else { continue }
            if !write(frames, to: connection) {
                closeSoon(connection, code: 1011, reason: "write failed")
            }
        }
    }

    /// Hands frames to lws in one `lws_write`; lws keeps what the socket does not take and
    /// sends it before the connection's next WRITEABLE callback, so order is kept.
    private func write(_ frames: [OutboundFrame], to connection: ServerConnection) -> Bool {
        if frames.count == 1, let frame = frames.first {
            let written = lws_write(connection.wsi, frame.payload, frame.payloadCount,
                                    frame.binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT)
            return written >= frame.payloadCount
        }
        var bytes = [UInt8](repeating: 0, count: OutboundFrame.headroom)
        bytes.reserveCapacity(OutboundFrame.headroom + frames.reduce(0) { $0 + $1.payloadCount + 10 })
        for frame in frames {
            WebSocketFrameHeader.append(payloadCount: frame.payloadCount, binary: frame.binary, to: &bytes)
            bytes.append(contentsOf: UnsafeBufferPointer(start: frame.payload, count: frame.payloadCount))
        }
        let count = bytes.count - OutboundFrame.headroom
        writtenTogether += frames.count
        // LWS_WRITE_HTTP is lws's raw write: on a WebSocket it sends the bytes as they are.
        let written = bytes.withUnsafeMutableBufferPointer {
            lws_write(connection.wsi, $0.baseAddress! + OutboundFrame.headroom, count, LWS_WRITE_HTTP)
        }
        return written >= count
    }
}

/// The header of an unfragmented, unmasked frame from a server (RFC 6455 §5.2).
enum WebSocketFrameHeader {
    static func append(payloadCount: Int, binary: Bool, to bytes: inout [UInt8]) {
        bytes.append(0x80 | (binary ? 0x2 : 0x1))  // FIN, and the opcode
        switch payloadCount {
        case ..<126:
            bytes.append(UInt8(payloadCount))
        case ..<65_536:
            bytes.append(126)
            bytes.append(UInt8(payloadCount >> 8))
            bytes.append(UInt8(payloadCount & 0xff))
        default:
            bytes.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((payloadCount >> shift) & 0xff)) }
        }
    }
}
