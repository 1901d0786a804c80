import Foundation
import PanesCore
import Testing

/// README.md documents every setting with its real default.
@Suite struct ReadmeTests {
    static let readme: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../README.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    @Test func everySettingRowIsInTheReadme() {
        for row in Settings.markdownTable.split(separator: "\n") {
            #expect(Self.readme.contains(row), "README.md lacks: \(row)")
        }
    }

    @Test func theReadmeShowsTheTwoCommandsFirst() {
        let serve = Self.readme.range(of: "scripts/serve")
        let test = Self.readme.range(of: "scripts/test")
        let concepts = Self.readme.range(of: "## Concepts")
        #expect(serve != nil && test != nil && concepts != nil)
        if let serve, let test, let concepts {
            #expect(serve.lowerBound < concepts.lowerBound && test.lowerBound < concepts.lowerBound)
        }
    }
}
