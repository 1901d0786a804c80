@testable import PanesTransport
import Testing

/// The incremental UTF-8 check agrees with Swift's own decoder, however the bytes are cut.
@Suite struct UTF8ValidatorTests {
    static let samples: [[UInt8]] = [
        Array("plain ascii".utf8), Array("é€😀κόσμε".utf8), [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80],
        [0xED, 0x9F, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
        [0x80], [0xFE], [0xFF], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC2, 0x41], [0xEF, 0xBF, 0xBF],
        // Runs of ASCII long enough to be read eight bytes at a time, around and between the rest.
        Array("{\"type\":\"connect\",\"id\":1}".utf8), Array("0123456789abcdefé0123456789abcdef".utf8),
        Array("0123456789abcdef".utf8) + [0xED, 0xA0, 0x80] + Array("0123456789".utf8),
        Array("01234567".utf8) + [0xE2, 0x82] + Array("01234567".utf8),
        Array("0123456".utf8) + [0xC2] + Array("0123456789abcdef".utf8),
        Array("0123456789abcde".utf8) + [0xFF] + Array("01234567".utf8),
        Array("01234567".utf8) + [0xF0, 0x9F, 0x98, 0x80] + Array("01234567".utf8),
    ]

    @Test(arguments: samples)
    func everySplitGivesTheSameAnswerAsSwiftsDecoder(_ bytes: [UInt8]) {
        let expected = String(validating: bytes, as: UTF8.self) != nil
        for cut in 0...bytes.count {
            var validator = UTF8Validator()
            let valid = bytes[..<cut].withUnsafeBytes { validator.accept($0) }
                && bytes[cut...].withUnsafeBytes { validator.accept($0) } && validator.isAtBoundary
            #expect(valid == expected, "\(bytes) cut at \(cut)")
        }
    }

    @Test func randomTextCutAnywhereGetsSwiftsAnswer() {
        var generator = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = [Array("abcdefghijklmnop".utf8), Array("0123456".utf8), Array("é€😀".utf8), [0x80], [0xC2],
                                 [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90], [0xFF], [0x41]]
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 1...8, using: &generator)).flatMap { _ in pieces.randomElement(using: &generator)! }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            let cut = Int.random(in: 0...bytes.count, using: &generator)
            var validator = UTF8Validator()
            let valid = bytes[..<cut].withUnsafeBytes { validator.accept($0) }
                && bytes[cut...].withUnsafeBytes { validator.accept($0) } && validator.isAtBoundary
            #expect(valid == expected, "\(bytes) cut at \(cut)")
        }
    }

    @Test func aCloseReasonIsCheckedLikeText() {
        let valid: [UInt8] = [0x03, 0xE8] + Array("κόσμε".utf8)
        #expect(valid.withUnsafeBytes { PeerClose.violation($0) } == nil)
        let invalid: [UInt8] = [0x03, 0xE8, 0xED, 0xA0, 0x80]
        #expect(invalid.withUnsafeBytes { PeerClose.violation($0)?.code } == 1007)
        #expect(([0x03] as [UInt8]).withUnsafeBytes { PeerClose.violation($0)?.code } == 1002)
        #expect(([0x13, 0x88] as [UInt8]).withUnsafeBytes { PeerClose.violation($0)?.code } == 1002, "5000")
    }
}
