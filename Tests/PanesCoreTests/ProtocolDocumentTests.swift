import Foundation
import PanesCore
import Testing

/// PROTOCOL.md lists every error and close code exactly as the code defines them.
@Suite struct ProtocolDocumentTests {
    static let protocolText: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../PROTOCOL.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    @Test(arguments: ErrorCode.allCases)
    func everyErrorCodeIsDocumentedWithItsNumberAndMeaning(_ code: ErrorCode) {
        #expect(Self.protocolText.contains("| `\(code.rawValue)` | \(code.number) | \(code.meaning) |"))
    }

    @Test(arguments: CloseCode.allCases)
    func everyCloseCodeIsDocumented(_ code: CloseCode) {
        #expect(Self.protocolText.contains("| \(code.rawValue) | \(code.meaning) |"))
    }
}
