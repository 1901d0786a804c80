// Threading: the store thread's, like the rest of `SQLiteStore`.
internal import CSQLite
public import PanesCore

/// Liveness writes (`putSessionLiveness`: a resume, a close) that follow one another in a
/// transaction, written a chunk at a time: one `UPDATE … FROM (VALUES …)` for up to
/// `LivenessRun.capacity` sessions instead of one UPDATE each. A reconnect storm's commit
/// holds hundreds of them, one per window; SQLite's work per statement (its VDBE program's
/// start, the index seek's setup, the reset and the bindings' clearing) is then paid once a
/// chunk (issue 27 §5).
///
/// A run is what applying the writes one by one would leave: it holds only liveness writes
/// that came one after another (anything else writes the run first, `SQLiteStore.apply`), and
/// no session twice: a second write of a session in the run writes the run first, so the
/// later values win, as they would one by one. A chunk that matched fewer rows than it has
/// sessions (a row a hand edit lost, a session not stored) is written again one by one, which
/// makes a missing row again for a stored session (`writeLiveness`), as one by one would.
struct LivenessRun {
    /// The most sessions one statement writes: 4 × 64 parameters, far below SQLite's limit.
    static let capacity = 64
    /// The chunk sizes a statement is kept for, largest first; a run is written in the largest
    /// chunks that fit, the last one or two (fewer than 4) one at a time.
    static let chunkSizes = [64, 16, 4]

    private(set) var writes: [SessionLiveness] = []

    init() { writes.reserveCapacity(Self.capacity) }

    var isEmpty: Bool { writes.isEmpty }
    var isFull: Bool { writes.count == Self.capacity }

    /// Whether the run has a write of this session already (compared by its id's bytes).
    func holds(_ id: SessionID) -> Bool {
        writes.contains { $0.id == id }
    }

    mutating func append(_ liveness: SessionLiveness) {
        writes.append(liveness)
    }

    mutating func clear() {
        writes.removeAll(keepingCapacity: true)
    }

    /// `UPDATE … FROM (VALUES …)` for `count` sessions, parameters bound four to a session in the
    /// order of `SQLiteStore.bindLiveness`. SQLite 3.33 or later (Debian 12 ships 3.40).
    static func updateSQL(sessions count: Int) -> String {
        let rows = (0..<count).map { row in
            let first = row * 4 + 1
            return "(?\(first), ?\(first + 1), ?\(first + 2), ?\(first + 3))"
        }
        return """
            UPDATE session_liveness SET last_active_at = v.column2, live_since = v.column3, failed_restores = v.column4
            FROM (VALUES \(rows.joined(separator: ", "))) AS v WHERE session_liveness.session = v.column1
            """
    }

    /// The SQL of each chunk size, made once.
    static let updateSQLs = chunkSizes.map { updateSQL(sessions: $0) }
}

extension SQLiteStore {
    /// Adds a liveness write to the transaction's run, writing the run first when it is full
    /// or already holds the session.
    func add(_ liveness: SessionLiveness, to run: inout LivenessRun) throws(SQLiteError) {
        if run.isFull || run.holds(liveness.id) { try write(&run) }
        run.append(liveness)
    }

    /// Writes the run's liveness writes and empties it.
    func write(_ run: inout LivenessRun) throws(SQLiteError) {
        guard !run.isEmpty else { return }
        var start = 0
        let count = run.writes.count
        for (slot, size) in LivenessRun.chunkSizes.enumerated() {
            while count - start >= size {
                try writeChunk(run.writes[start..<start + size], slot: slot)
                start += size
            }
        }
        for index in start..<count { try writeLiveness(run.writes[index]) }
        // Not on a throw: the transaction is rolled back, and the run with it.
        run.clear()
    }

    /// One statement for the chunk; one by one again when it matched fewer rows than it has
    /// sessions (no session is twice in a run, so each matches at most one row).
    private func writeChunk(_ chunk: ArraySlice<SessionLiveness>, slot: Int) throws(SQLiteError) {
        try connection.withStatement(in: &livenessChunkStatements[slot], LivenessRun.updateSQLs[slot]) {
            statement throws(SQLiteError) in
            var parameter: Int32 = 1
            for liveness in chunk {
                try Self.bindLiveness(liveness, to: statement, from: parameter)
                parameter += 4
            }
            while try statement.step() {}
        }
        guard connection.changes < chunk.count else { return }
        // Rare: the same values again, now with `writeLiveness`'s insert of a missing row.
        for liveness in chunk { try writeLiveness(liveness) }
    }

    /// Binds a liveness write's id, last active time, live-since time (or NULL) and failed
    /// restores to four parameters from `first` on: the id from its bytes, with no `String`.
    static func bindLiveness(_ liveness: SessionLiveness, to statement: SQLiteStatement,
                             from first: Int32) throws(SQLiteError) {
        try statement.bind(liveness.id.bytes, at: first)
        try statement.bind(liveness.lastActiveAt, at: first + 1)
        if let since = liveness.liveSince { try statement.bind(since, at: first + 2) } else { try statement.bindNull(at: first + 2) }
        try statement.bind(Int64(liveness.failedRestores), at: first + 3)
    }
}
