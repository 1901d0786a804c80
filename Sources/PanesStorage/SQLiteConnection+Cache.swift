/// The page cache of one connection (`PRAGMA cache_size`): each connection to the file has its
/// own, SQLite's default 2,000 KiB unless limited (the setting `sqliteCacheKiB`).
extension SQLiteConnection {
    /// Keeps at most `kiB` KiB of the file's pages in memory (at least 1).
    func limitCache(kiB: Int) throws(SQLiteError) {
        // A negative size is in KiB, not pages.
        try execute("PRAGMA cache_size=-\(max(1, kiB))")
    }

    /// The cache's limit as SQLite holds it, in KiB (a positive `cache_size` counts pages).
    func cacheKiB() throws(SQLiteError) -> Int {
        let size = try integer("PRAGMA cache_size") ?? 0
        guard size > 0 else { return Int(-size) }
        return Int(size * (try integer("PRAGMA page_size") ?? 4_096) / 1_024)
    }
}
