import Foundation

/// A fresh directory for one test's database files, removed when the test lets go of it.
package final class TemporaryDirectory {
    package let path: String

    package init() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("panes-storage-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    package func file(_ name: String) -> String { "\(path)/\(name)" }
}
