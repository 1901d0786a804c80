internal import CLibWebSockets

/// One accepted WebSocket: its partial inbound message, its outbound queue and its place in
/// the idle detector's lists. Touched only on the service thread.
final class ServerConnection {
    let id: UInt64
    let wsi: OpaquePointer
    var inbound: [UInt8] = []
    var queue = FrameQueue()
    /// Frames sent during the current callback, written together at its end (`flushGathered`).
    var gathered: [OutboundFrame] = []
    var gatheredBytes = 0
    /// Close once the queue is written (a deliberate close: destroyed session, drain).
    var closeAfterFlush: (code: UInt16, reason: String)?
    /// Close at the next chance, dropping what is queued (protocol violation, overflow).
    var closeNow: (code: UInt16, reason: String)?
    /// The client it counts as (`PeerAddress.client`), read from the handshake.
    var peer: String?
    // The small fields together, in one word: Swift lays a class out in declaration order, and
    // apart they took three (an object of 200 bytes, 184 now; every idle scene holds one).
    /// UTF-8 state of the text message being received, across its fragments.
    var utf8 = UTF8Validator()
    var pingWanted = false
    /// The peer sent a close frame: the disconnect was deliberate, not a crash or a drop.
    var peerClosed = false
    /// `pauseReading` is in effect.
    var readingPaused = false
    /// Its close handshake has begun (one of `maxClosingHandshakes`), or it waits for a turn.
    var closeStarted = false
    var waitingToClose = false

    // Idle detection (see `IdleDetector`).
    /// When the peer was last heard from (any frame or pong), in monotonic milliseconds.
    var lastHeard: UInt64
    /// When the server asked this connection to close (for dropping one that never finishes).
    var closeRequestedAt: UInt64 = 0
    /// The idle list this connection is in, and its neighbours there.
    unowned(unsafe) var list: ConnectionList?
    unowned(unsafe) var previous: ServerConnection?
    var next: ServerConnection?

    init(id: UInt64, wsi: OpaquePointer, now: UInt64) {
        self.id = id
        self.wsi = wsi
        self.lastHeard = now
    }

    var closing: Bool { closeAfterFlush != nil || closeNow != nil }
}
