#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The server's data folder: created 0700, or, if it exists, checked to belong to this user
/// and tightened to 0700. Other users on the machine must not read the database, and a folder
/// someone else owns could be swapped under the server, so that is refused, not used.
public enum DataFolder {
    /// What `prepare` did, for the start-up log.
    public enum Outcome: Sendable, Equatable {
        case created
        /// It existed with access for others (the old mode), which was removed.
        case tightened(from: UInt32)
        case unchanged
    }

    /// Creates the folder (and missing parents, each 0700) or checks and tightens an existing one.
    /// - Throws: `SQLiteError` with `.notPrivate` when the path is not a folder, belongs to
    ///   another user, or cannot be created or changed; the message says what to do.
    @discardableResult
    public static func prepare(_ path: String) throws(SQLiteError) -> Outcome {
        var created = false
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if access(prefix, F_OK) != 0 {
                guard mkdir(prefix, 0o700) == 0 || errno == EEXIST else {
                    throw failure("cannot create the data folder \(prefix): \(String(cString: strerror(errno)))", path)
                }
                created = true
            }
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw failure("cannot read the data folder: \(String(cString: strerror(errno)))", path)
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw failure("the data path is not a folder", path) }
        guard info.st_uid == geteuid() else {
            throw failure("the data folder belongs to user id \(info.st_uid), not to this process's (\(geteuid())); "
                              + "run Panes as its owner, or give it a folder of its own (`--data`)", path)
        }
        let mode = UInt32(info.st_mode) & 0o777
        guard mode & 0o077 != 0 else { return created ? .created : .unchanged }
        guard chmod(path, 0o700) == 0 else {
            throw failure("cannot make the data folder private (0700): \(String(cString: strerror(errno)))", path)
        }
        return created ? .created : .tightened(from: mode)
    }

    private static func failure(_ message: String, _ path: String) -> SQLiteError {
        SQLiteError(.notPrivate, message, path: path)
    }
}
