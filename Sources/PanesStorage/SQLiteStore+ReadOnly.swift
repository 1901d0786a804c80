#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

extension SQLiteStore {
    /// Opens an existing database for inspection (`panes inspect`): never creates, migrates,
    /// writes or checkpoints it, so it is safe next to a running server.
    /// - Throws: `SQLiteError` with `.missingDatabase` when there is no file, and
    ///   `.schemaTooNew` or `.schemaTooOld` when its schema is not the one this build reads.
    public static func openReadOnly(path: String) throws -> SQLiteStore {
        guard fileExists(path) else {
            throw SQLiteError(.missingDatabase, "there is no database file here", path: path)
        }
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        let found = try Migrations.version(of: connection)
        let known = Migrations.latest
        if found > known {
            throw SQLiteError(.schemaTooNew(found: found, known: known),
                              "the database has schema version \(found), but this build reads version \(known); "
                                  + "inspect it with a newer build", path: path)
        }
        if found < known {
            throw SQLiteError(.schemaTooOld(found: found, known: known),
                              found == 0
                                  ? "this is not a Panes database, or the server has never started on it"
                                  : "the database has schema version \(found), but this build reads version \(known); "
                                      + "start the server once on it to migrate it",
                              path: path)
        }
        return SQLiteStore(readOnly: connection)
    }

    /// SQLite's own "unable to open database file" does not say whether the file is missing.
    private static func fileExists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }
}
