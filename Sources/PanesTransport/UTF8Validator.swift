/// Checks UTF-8 as it arrives, a piece at a time, so a text message split over fragments (or
/// over lws's receive buffer, `WebSocketServer.receiveBufferBytes`) is judged as a whole without being copied first.
///
/// It follows RFC 3629's table: no overlong forms, no surrogates (`ED A0`–`ED BF`), nothing
/// above U+10FFFF. lws's own check is not used because it also checks close reasons and, when
/// one is invalid, drops the connection without the 1007 close RFC 6455 asks for.
struct UTF8Validator {
    /// Continuation bytes still expected for the current scalar.
    private var remaining: UInt8 = 0
    /// The range the next continuation byte must fall in (narrower after E0, ED, F0, F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// False as soon as the bytes so far cannot be the start of valid UTF-8.
    mutating func accept(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        while index < count {
            if remaining == 0 {
                // Between scalars, ASCII eight bytes at a time (no byte with its high bit set):
                // protocol frames are nearly all ASCII.
                while index + 8 <= count,
                      base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                }
                guard index < count else { break }
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                index += 1
                if byte < 0x80 { continue }
                switch byte {
                case 0xC2...0xDF: expect(1, 0x80, 0xBF)
                case 0xE0: expect(2, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: expect(2, 0x80, 0xBF)
                case 0xED: expect(2, 0x80, 0x9F)
                case 0xF0: expect(3, 0x90, 0xBF)
                case 0xF1...0xF3: expect(3, 0x80, 0xBF)
                case 0xF4: expect(3, 0x80, 0x8F)
                default: return false
                }
            } else {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                index += 1
                guard byte >= lower && byte <= upper else { return false }
                expect(remaining - 1, 0x80, 0xBF)
            }
        }
        return true
    }

    /// Whether the bytes so far end on a scalar boundary (a message may end here).
    var isAtBoundary: Bool { remaining == 0 }

    mutating func reset() { expect(0, 0x80, 0xBF) }

    private mutating func expect(_ count: UInt8, _ lower: UInt8, _ upper: UInt8) {
        remaining = count
        self.lower = lower
        self.upper = upper
    }

    /// Whether `bytes` is complete, valid UTF-8.
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.accept(bytes) && validator.isAtBoundary
    }
}
