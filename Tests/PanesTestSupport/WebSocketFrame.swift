/// One WebSocket frame as it travels (RFC 6455 §5.2), for tests that write or read frames
/// one by one, including ones a well-behaved peer would never send.
public struct WebSocketFrame: Sendable, Equatable, CustomStringConvertible {
    public enum Opcode: UInt8, Sendable {
        case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA
    }

    public var fin: Bool
    /// RSV1–RSV3 as the high bits of the first byte (0x40, 0x20, 0x10).
    public var rsv: UInt8
    /// The raw 4-bit opcode, so reserved ones can be sent.
    public var opcode: UInt8
    public var payload: [UInt8]

    public init(fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, payload: [UInt8] = []) {
        self.fin = fin
        self.rsv = rsv
        self.opcode = opcode
        self.payload = payload
    }

    public init(_ opcode: Opcode, _ payload: [UInt8] = [], fin: Bool = true) {
        self.init(fin: fin, opcode: opcode.rawValue, payload: payload)
    }

    public static func text(_ text: String, fin: Bool = true) -> WebSocketFrame { .init(.text, Array(text.utf8), fin: fin) }

    public static func close(_ code: UInt16, _ reason: String = "") -> WebSocketFrame {
        .init(.close, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    public var kind: Opcode? { Opcode(rawValue: opcode) }

    /// The close code of a close frame, nil for other frames or an empty close payload.
    public var closeCode: UInt16? {
        guard opcode == Opcode.close.rawValue, payload.count >= 2 else { return nil }
        return UInt16(payload[0]) << 8 | UInt16(payload[1])
    }

    public var closeReason: String {
        String(decoding: payload.dropFirst(2), as: UTF8.self)
    }

    /// The bytes on the wire. A client masks (RFC 6455 §5.3); `masked: false` breaks that rule
    /// on purpose. `announcedLength` writes a length other than the payload's (a lie, for limits).
    public func encoded(masked: Bool = true, mask: [UInt8]? = nil, announcedLength: UInt64? = nil) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv & 0x70) | (opcode & 0x0F)]
        let length = announcedLength ?? UInt64(payload.count)
        let maskBit: UInt8 = masked ? 0x80 : 0
        if length < 126 {
            bytes.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        }
        guard masked else { return bytes + payload }
        let key = mask ?? (0..<4).map { _ in UInt8.random(in: 0...255) }
        bytes += key
        bytes += payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
        return bytes
    }

    public var description: String {
        "frame(fin: \(fin), opcode: \(opcode), \(payload.count) bytes\(closeCode.map { ", close \($0)" } ?? ""))"
    }
}
