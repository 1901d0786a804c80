#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Keeps the database files readable by this user only: they hold every session's
/// `userInfo`, every document and every preference.
enum FilePermissions {
    /// Sets the database file, and its `-wal` and `-shm` files if they exist, to 0600. SQLite
    /// creates the `-wal` and `-shm` files with the database file's mode, so doing this right
    /// after opening also covers the ones created later.
    static func makePrivate(databaseAt path: String) throws(SQLiteError) {
        for file in [path, path + "-wal", path + "-shm"] where access(file, F_OK) == 0 {
            guard chmod(file, 0o600) == 0 else {
                throw SQLiteError(.notPrivate, "cannot make \(file) private (mode 0600): "
                                      + String(cString: strerror(errno)), path: path)
            }
        }
    }
}
