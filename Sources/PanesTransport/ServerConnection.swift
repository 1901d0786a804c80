internal import CLibWebSockets

/// One accepted WebSocket: its partial inbound message, its outbound queue and its place in
/// the idle detector's lists. Touched only on the service thread.
final class ServerConnection {
    let id: UInt64
    let wsi: OpaquePointer
    var inbound: [UInt8] = []
    var queue = FrameQueue()
    /// Payload bytes of `gathered`, in the 4 bytes after `queue`'s 12 (Swift lays a class out
    /// in declaration order). It saturates: it is compared with `maxCoalescedWriteBytes`, at
    /// most 16 MiB, and only the first frame gathered may be larger.
    private var gatheredByteCount: UInt32 = 0
    /// Frames sent during the current callback, written together at its end (`flushGathered`).
    var gathered: [OutboundFrame] = []
    /// The close asked for, both kinds in one field (`closeAfterFlush`, `closeNow`: apart they
    /// took 24 bytes each), out of line: a connection rarely closes while the server runs,
    /// and inline it took 24 bytes of every idle scene's. Once `now` is set its code and
    /// reason are the ones sent.
    private var pendingClose: PendingClose?
    // The small fields together, after `pendingClose`: apart they took three words. With the
    // flags in one byte, the two counters 32 bits, no copy of the peer's address (the
    // delegate is told it at the open and keeps it), the close out of line and the idle list
    // named by a byte, the object is 104 bytes (120 before, 152 before that), which glibc
    // keeps in a 112-byte chunk (128, 160); every idle scene holds one.
    /// UTF-8 state of the text message being received, across its fragments.
    var utf8 = UTF8Validator()
    private var flags: Flags = []
    /// The idle list this connection is in (`ConnectionList.tag`), 0 for none: a byte where a
    /// reference to the list took 8.
    var listTag: UInt8 = 0

    // Idle detection (see `IdleDetector`).
    /// When the peer was last heard from (any frame or pong), in monotonic milliseconds; once
    /// the connection is in the detector's closing list, when its close was asked
    /// (`closeRequestedAt`). The detector reads each only while it means that.
    var lastHeard: UInt64
    /// Its neighbours in its idle list.
    unowned(unsafe) var previous: ServerConnection?
    var next: ServerConnection?

    init(id: UInt64, wsi: OpaquePointer, now: UInt64) {
        self.id = id
        self.wsi = wsi
        self.lastHeard = now
    }

    var closing: Bool { pendingClose != nil }

    var gatheredBytes: Int {
        get { Int(gatheredByteCount) }
        set { gatheredByteCount = UInt32(clamping: newValue) }
    }

    // The flags, each in one bit of `flags` (`subscript(flag:)`).
    var pingWanted: Bool { get { self[.pingWanted] } set { self[.pingWanted] = newValue } }
    /// The peer sent a close frame: the disconnect was deliberate, not a crash or a drop.
    var peerClosed: Bool { get { self[.peerClosed] } set { self[.peerClosed] = newValue } }
    /// `pauseReading` is in effect.
    var readingPaused: Bool { get { self[.readingPaused] } set { self[.readingPaused] = newValue } }
    /// Its close handshake has begun (one of `maxClosingHandshakes`), or it waits for a turn.
    var closeStarted: Bool { get { self[.closeStarted] } set { self[.closeStarted] = newValue } }
    var waitingToClose: Bool { get { self[.waitingToClose] } set { self[.waitingToClose] = newValue } }
    /// lws reported it closed (`LWS_CALLBACK_CLOSED`): it is out of `connections` and its wsi is
    /// gone. What still holds it (a write turn, gathered frames) checks this flag rather than
    /// looking its id up in `connections` (a hash each time).
    var closed: Bool { get { self[.closed] } set { self[.closed] = newValue } }

    /// A flag's bit in `flags`: the one place that reads and writes them.
    private subscript(flag: Flags) -> Bool {
        get { flags.contains(flag) }
        set { if newValue { flags.insert(flag) } else { flags.remove(flag) } }
    }

    /// Close once the queue is written (a deliberate close: destroyed session, drain). Set
    /// only on a connection not yet closing.
    var closeAfterFlush: (code: UInt16, reason: String)? {
        get { pendingClose.flatMap { $0.afterFlush ? ($0.code, $0.reason) : nil } }
        set {
            guard let newValue else { return }
            pendingClose = PendingClose(reason: newValue.reason, code: newValue.code, afterFlush: true,
                                        now: pendingClose?.now ?? false)
        }
    }

    /// Close at the next chance, dropping what is queued (protocol violation, overflow).
    var closeNow: (code: UInt16, reason: String)? {
        get { pendingClose.flatMap { $0.now ? ($0.code, $0.reason) : nil } }
        set {
            guard let newValue else { return }
            pendingClose = PendingClose(reason: newValue.reason, code: newValue.code,
                                        afterFlush: pendingClose?.afterFlush ?? false, now: true)
        }
    }

    /// When the server asked this connection to close (for dropping one that never finishes):
    /// kept in `lastHeard`, which the idle detector no longer reads once it is closing.
    var closeRequestedAt: UInt64 {
        get { lastHeard }
        set { lastHeard = newValue }
    }

    /// A close asked for (`closeAfterFlush`, `closeNow`), replaced whole when the other kind is
    /// asked too.
    private final class PendingClose {
        let reason: String
        let code: UInt16
        let afterFlush: Bool
        let now: Bool

        init(reason: String, code: UInt16, afterFlush: Bool, now: Bool) {
            self.reason = reason
            self.code = code
            self.afterFlush = afterFlush
            self.now = now
        }
    }

    /// The six flags in one byte.
    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let pingWanted = Flags(rawValue: 1 << 0)
        static let peerClosed = Flags(rawValue: 1 << 1)
        static let readingPaused = Flags(rawValue: 1 << 2)
        static let closeStarted = Flags(rawValue: 1 << 3)
        static let waitingToClose = Flags(rawValue: 1 << 4)
        static let closed = Flags(rawValue: 1 << 5)
    }
}
