import PanesTestSupport
@testable import PanesTransport
import Testing

/// The headers the transport writes itself when it sends several frames at once, against the
/// test client's own encoder (RFC 6455 §5.2, server frames unmasked).
@Suite struct WebSocketFrameHeaderTests {
    @Test(arguments: [0, 1, 125, 126, 127, 65_535, 65_536, 1 << 20])
    func aHeaderIsTheFramesHeaderForEveryLengthEncoding(_ length: Int) {
        for binary in [false, true] {
            var header: [UInt8] = []
            WebSocketFrameHeader.append(payloadCount: length, binary: binary, to: &header)
            let frame = WebSocketFrame(binary ? .binary : .text, [UInt8](repeating: 0x61, count: length))
            let expected = Array(frame.encoded(masked: false).dropLast(length))
            #expect(header == expected, "\(length) bytes, binary \(binary)")
        }
    }
}
