/// The path of a SQLite database (`panes.sqlite`, not created yet) in a fresh directory of its
/// own, removed with it when the test lets go: how every SQLite test starts.
package final class TemporaryDatabase {
    /// The directory, for other files beside the database.
    package let directory: TemporaryDirectory
    package let path: String

    package init() throws {
        directory = try TemporaryDirectory()
        path = directory.file("panes.sqlite")
    }
}
