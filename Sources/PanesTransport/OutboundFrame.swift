internal import CLibWebSockets

/// One message ready to write, with lws's `LWS_PRE` headroom in front of the payload.
///
/// Immutable once made and shared by reference: a broadcast to ten thousand scenes queues
/// the same frame ten thousand times. lws writes the frame header into the headroom during
/// `lws_write`; that is safe to repeat because every write happens on the service thread,
/// one at a time, and the payload itself is never touched.
public final class OutboundFrame: @unchecked Sendable {
    let storage: UnsafeMutableRawBufferPointer
    let payloadCount: Int
    let binary: Bool

    /// The headroom a caller must put in front of a payload passed to `init(headroomAndPayload:)`.
    public static var headroom: Int { pws_pre() }

    /// Takes bytes that already start with `headroom` bytes of space (the JSON encoder writes
    /// them), so the payload is copied once, here.
    public init(headroomAndPayload bytes: [UInt8], binary: Bool = false) {
        precondition(bytes.count >= Self.headroom, "frame lacks LWS_PRE headroom")
        storage = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        storage.copyBytes(from: bytes)
        payloadCount = bytes.count - Self.headroom
        self.binary = binary
    }

    /// Takes over memory that starts with exactly `OutboundFrame.headroom` bytes of space (more
    /// would be sent as part of the payload), and deallocates it when the
    /// frame goes (`JSONCodec.encode(_:headroom:handingOverTo:)` writes a message into it): the
    /// payload is not copied at all.
    public init(adopting storage: UnsafeMutableRawBufferPointer, binary: Bool = false) {
        precondition(storage.count >= Self.headroom, "frame lacks LWS_PRE headroom")
        self.storage = storage
        payloadCount = storage.count - Self.headroom
        self.binary = binary
    }

    public convenience init(text: String) {
        self.init(headroomAndPayload: [UInt8](repeating: 0, count: Self.headroom) + Array(text.utf8))
    }

    deinit { storage.deallocate() }

    var payload: UnsafeMutablePointer<UInt8> {
        (storage.baseAddress! + Self.headroom).assumingMemoryBound(to: UInt8.self)
    }
}
