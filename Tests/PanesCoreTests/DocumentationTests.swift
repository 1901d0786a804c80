import Foundation
import PanesCore
import Testing

/// The documentation says what the code does: docs/operating.md lists every setting with its
/// real default, and the README, the front door, shows the two commands first and links every
/// page of docs/.
@Suite struct DocumentationTests {
    static func read(_ path: String) -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../\(path)")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    static let readme = read("README.md")
    static let operating = read("docs/operating.md")

    @Test func everySettingRowIsInTheOperatingGuide() {
        #expect(!Self.operating.isEmpty, "docs/operating.md is missing")
        for row in Settings.markdownTable.split(separator: "\n") {
            #expect(Self.operating.contains(row), "docs/operating.md lacks: \(row)")
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

    @Test(arguments: ["operating", "api", "client", "architecture", "testing", "benchmarks"])
    func theReadmeLinksEveryPage(_ page: String) {
        #expect(Self.readme.contains("](docs/\(page).md)"), "README.md does not link docs/\(page).md")
        #expect(!Self.read("docs/\(page).md").isEmpty, "docs/\(page).md is missing")
    }
}
