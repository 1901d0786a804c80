// Threading: as the store's (the store thread only).
public import PanesCore
internal import PanesJSON

/// Outcomes of keyed requests (`StoreCommand.recordRequest`): one row per user, workspace and
/// key, written in the transaction of the change each reports (migration 7). One node writes
/// them all and holds them all in memory, so nothing is looked up on the way: a record of a key
/// used again (one the hub forgot) is replaced.
extension SQLiteStore {
    /// The stored records of these keys.
    public func loadRequestRecords(_ slots: [RequestKeySlot]) throws -> [RequestRecord] {
        try slots.compactMap { try storedRecord($0) }
    }

    /// The record of `slot`, if stored.
    func storedRecord(_ slot: RequestKeySlot) throws(SQLiteError) -> RequestRecord? {
        var found: RequestRecord?
        try connection.forEachRow(RecordSQL.select, [.text(slot.owner.workspace), .text(slot.owner.user),
                                                     .blob(slot.key.bytes)]) { row in
            found = record(slot: slot, fingerprint: row.text(at: 0), result: row.text(at: 1), at: row.int64(at: 2))
        }
        return found
    }

    func writeRecord(_ record: RequestRecord) throws(SQLiteError) {
        try connection.run(RecordSQL.insert, [
            .text(record.slot.owner.workspace), .text(record.slot.owner.user), .blob(record.slot.key.bytes),
            .text(record.fingerprint), .text(JSONCodec.encodeString(record.result)), .int(record.at),
        ])
    }

    func forgetRecords(_ keys: [RecordedKey]) throws(SQLiteError) {
        for key in keys {
            try connection.run(RecordSQL.delete, [.text(key.slot.owner.workspace), .text(key.slot.owner.user),
                                                  .blob(key.slot.key.bytes), .int(key.at)])
        }
    }

    func pruneRecords(before: Millis, keepPerUser: Int) throws(SQLiteError) {
        try connection.run(RecordSQL.pruneOld, [.int(before)])
        try connection.run(RecordSQL.pruneMany, [.int(Int64(keepPerUser))])
    }

    /// Every record, oldest first, for the hub to load at start.
    func loadRecords() throws(SQLiteError) -> [RequestRecord] {
        var records: [RequestRecord] = []
        try connection.forEachRow(RecordSQL.all) { row in
            let slot = RequestKeySlot(owner: OwnerKey(workspace: row.text(at: 0) ?? "", user: row.text(at: 1) ?? ""),
                                      key: RequestKey(bytes: row.blob(at: 2) ?? []))
            if let record = record(slot: slot, fingerprint: row.text(at: 3), result: row.text(at: 4), at: row.int64(at: 5)) {
                records.append(record)
            }
        }
        return records
    }

    private func record(slot: RequestKeySlot, fingerprint: String?, result: String?, at: Millis) -> RequestRecord? {
        guard let fingerprint, let result, case .success(let value) = JSONCodec.decode(result, acceptingEquivalentKeys: true) else { return nil }
        return RequestRecord(slot: slot, fingerprint: fingerprint, result: value, at: at)
    }

    private enum RecordSQL {
        static let select = """
            SELECT fingerprint, result, created_at FROM request_records WHERE workspace = ?1 AND user = ?2 AND key = ?3
            """
        /// Over a stale record of the key (one the hub forgot), if there is one.
        static let insert = """
            INSERT INTO request_records (workspace, user, key, fingerprint, result, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (workspace, user, key) DO UPDATE
                SET fingerprint = excluded.fingerprint, result = excluded.result, created_at = excluded.created_at
            """
        static let all = """
            SELECT workspace, user, key, fingerprint, result, created_at FROM request_records ORDER BY created_at
            """
        static let delete = """
            DELETE FROM request_records WHERE workspace = ?1 AND user = ?2 AND key = ?3 AND created_at <= ?4
            """
        static let pruneOld = "DELETE FROM request_records WHERE created_at < ?1"
        /// Each user's newest ?1 stay.
        static let pruneMany = """
            DELETE FROM request_records WHERE (workspace, user, key) IN (
                SELECT workspace, user, key FROM (
                    SELECT workspace, user, key,
                           row_number() OVER (PARTITION BY workspace, user ORDER BY created_at DESC) AS newer
                    FROM request_records)
                WHERE newer > ?1)
            """
    }
}
