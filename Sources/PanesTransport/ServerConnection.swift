internal import CLibWebSockets

/// One accepted WebSocket: its partial inbound message and its outbound queue. Touched only
/// on the service thread.
final class ServerConnection {
    let id: UInt64
    let wsi: OpaquePointer
    var inbound: [UInt8] = []
    var queue = FrameQueue()
    var pingWanted = false
    /// Close once the queue is written (a deliberate close: destroyed session, drain).
    var closeAfterFlush: (code: UInt16, reason: String)?
    /// Close at the next chance, dropping what is queued (protocol violation, overflow).
    var closeNow: (code: UInt16, reason: String)?
    /// The peer sent a close frame: the disconnect was deliberate, not a crash or a drop.
    var peerClosed = false
    /// When the peer was last heard from (any frame or pong), in monotonic milliseconds.
    var lastHeard: UInt64
    /// An idle ping went out and nothing has been heard since.
    var idlePinged = false

    init(id: UInt64, wsi: OpaquePointer, now: UInt64) {
        self.id = id
        self.wsi = wsi
        self.lastHeard = now
    }

    func heard(at now: UInt64) {
        lastHeard = now
        idlePinged = false
    }

    var closing: Bool { closeAfterFlush != nil || closeNow != nil }
}
