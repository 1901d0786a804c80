// Threading: as the store's (the store thread only).
public import PanesCore
internal import PanesJSON

/// Outcomes of keyed requests (`StoreCommand.recordRequest`), shared by every node: a retry
/// that reaches another node finds the first attempt's outcome here (migration 5).
///
/// Each key a batch records is locked (an advisory transaction lock, with the channels') and
/// looked up in the transaction before anything is written: a persist recording a key another
/// node recorded first is left out whole, and a commit doing so is refused
/// (`CommitOutcome.recorded`). So of two attempts of one request through two nodes, or a
/// write held on a node while its retry went through another, exactly one is applied.
extension PostgresStore {
    public func loadRequestRecords(_ slots: [RequestKeySlot]) throws -> [RequestRecord] {
        guard !slots.isEmpty else { return [] }
        let rows = try connection.query(RecordSQL.lookUp, Self.slotArrays(slots))
        return Self.records(rows)
    }

    /// The advisory lock a key is checked and recorded under (taken with the channels').
    static func keyLock(_ slot: RequestKeySlot) -> String {
        "key:\(slot.owner.workspace):\(slot.owner.user.utf8.count):\(slot.owner.user):\(slot.key.hex)"
    }

    static func recordedSlots(_ writes: [StoreWrite]) -> [RequestKeySlot] {
        var slots: [RequestKeySlot] = []
        for write in writes {
            let commands: [StoreCommand]
            switch write {
            case .persist(let persisted): commands = persisted
            case .commit(let commit): commands = commit.commands
            case .signal: continue
            }
            for case .recordRequest(let record) in commands { slots.append(record.slot) }
        }
        return slots
    }

    /// Queues the look-up of the keys a batch records; `found` is filled in with the next
    /// round trip (`RecordsFound.ensure`).
    func sendKeyCheck(_ slots: [RequestKeySlot], into found: RecordsFound) throws {
        found.pending = true
        try connection.send(RecordSQL.lookUp, Self.slotArrays(slots)) { rows in
            found.pending = false
            for record in Self.records(rows) { found.records[record.slot] = record }
        }
    }

    func writeRecord(_ record: RequestRecord) throws {
        try connection.send(RecordSQL.insert, [
            .text(record.slot.owner.workspace), .text(record.slot.owner.user), .bytes(record.slot.key.bytes),
            .text(record.fingerprint), .text(json(record.result)), .int(record.at),
        ])
    }

    func forgetRecords(_ keys: [RecordedKey]) throws {
        try connection.send(RecordSQL.forget, Self.slotArrays(keys.map(\.slot))
                                + [.text(Self.arrayLiteral(keys.map { String($0.at) }))])
    }

    func pruneRecords(before: Millis, keepPerUser: Int) throws {
        try connection.send(RecordSQL.pruneOld, [.int(before)])
        try connection.send(RecordSQL.pruneMany, [.int(Int64(keepPerUser))])
    }

    /// Every record, oldest first (in `loadState`'s snapshot).
    func loadRecords() throws -> [RequestRecord] {
        Self.records(try connection.query(RecordSQL.all))
    }

    private static func slotArrays(_ slots: [RequestKeySlot]) -> [PostgresValue] {
        [.text(arrayLiteral(slots.map(\.owner.workspace))), .text(arrayLiteral(slots.map(\.owner.user))),
         .text(arrayLiteral(slots.map(\.key.hex)))]
    }

    /// Rows of (workspace, user_name, key, fingerprint, result, created_at).
    private static func records(_ rows: PostgresRows) -> [RequestRecord] {
        var records: [RequestRecord] = []
        for row in 0..<rows.count {
            guard let fingerprint = rows.text(row, 3), let text = rows.text(row, 4),
                  case .success(let result) = JSONCodec.decode(text) else { continue }
            let slot = RequestKeySlot(owner: OwnerKey(workspace: rows.text(row, 0) ?? "", user: rows.text(row, 1) ?? ""),
                                      key: RequestKey(bytes: rows.bytes(row, 2) ?? []))
            records.append(RequestRecord(slot: slot, fingerprint: fingerprint, result: result, at: rows.int64(row, 5)))
        }
        return records
    }

    /// The records a batch's key check found, filled in when its round trip is answered.
    final class RecordsFound {
        var records: [RequestKeySlot: RequestRecord] = [:]
        var pending = false

        /// The records of the keys `commands` record, the check answered first if need be.
        func found(in commands: [StoreCommand], _ connection: PostgresConnection) throws -> [RequestRecord] {
            guard commands.contains(where: { if case .recordRequest = $0 { true } else { false } }) else { return [] }
            if pending { try connection.answer() }
            return commands.compactMap { command in
                if case .recordRequest(let record) = command { records[record.slot] } else { nil }
            }
        }
    }

    private enum RecordSQL {
        static let columns = "workspace, user_name, key, fingerprint, result, created_at"
        static let lookUp = """
            SELECT \(columns) FROM request_records
            WHERE (workspace, user_name, key) IN (
                SELECT w, u, decode(k, 'hex') FROM unnest($1::text[], $2::text[], $3::text[]) AS t(w, u, k))
            """
        /// Checked under the key's lock first; the conflict clause only keeps a batch that
        /// recorded one key twice from failing.
        static let insert = """
            INSERT INTO request_records (\(columns)) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (workspace, user_name, key) DO NOTHING
            """
        static let all = "SELECT \(columns) FROM request_records ORDER BY created_at"
        static let forget = """
            DELETE FROM request_records AS r
            USING unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS t(w, u, k, a)
            WHERE r.workspace = t.w AND r.user_name = t.u AND r.key = decode(t.k, 'hex') AND r.created_at <= t.a
            """
        static let pruneOld = "DELETE FROM request_records WHERE created_at < $1"
        /// Each user's newest $1 stay.
        static let pruneMany = """
            DELETE FROM request_records WHERE (workspace, user_name, key) IN (
                SELECT workspace, user_name, key FROM (
                    SELECT workspace, user_name, key,
                           row_number() OVER (PARTITION BY workspace, user_name ORDER BY created_at DESC) AS newer
                    FROM request_records) AS ranked
                WHERE newer > $1)
            """
    }
}
