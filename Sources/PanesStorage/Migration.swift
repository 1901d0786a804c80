/// One step of the schema, applied once, in its own transaction, and recorded in
/// `PRAGMA user_version`.
struct Migration: Sendable {
    /// The `user_version` the database has after this step: 1 for the first, then one more each.
    let version: Int64
    /// What the step is for, in error messages.
    let name: String
    let apply: @Sendable (SQLiteConnection) throws -> Void

    init(version: Int64, name: String, apply: @escaping @Sendable (SQLiteConnection) throws -> Void) {
        self.version = version
        self.name = name
        self.apply = apply
    }

    /// A step that is only schema SQL.
    init(version: Int64, name: String, sql: String) {
        self.init(version: version, name: name) { connection in try connection.execute(sql) }
    }
}
