// Threading: as the store's (the store thread only).
public import PanesCore
internal import PanesJSON

/// Outcomes of keyed requests (`StoreCommand.recordRequest`), shared by every node, and the
/// keys nodes reserved before handling a request (migration 5): a retry that reaches another
/// node finds the first attempt's outcome here, or the node that has it in flight.
///
/// A row is a record (its `result` set) or a reservation (`result` NULL, `node` the node that
/// holds it). Each key a batch writes is locked (an advisory transaction lock, with the
/// channels') and looked up in the transaction before anything is written: a persist
/// recording a key already recorded, or reserved by another node, is left out whole, and a
/// commit doing so is refused (`CommitOutcome.recorded`, or `.failed` for a reservation). So of
/// two attempts of one request through two nodes, or a write held on a node while its retry
/// went through another, exactly one is applied.
extension PostgresStore {
    public func loadRequestRecords(_ slots: [RequestKeySlot]) throws -> [RequestRecord] {
        guard !slots.isEmpty else { return [] }
        return Self.rows(try connection.query(RecordSQL.lookUp, Self.slotArrays(slots))).compactMap(\.record)
    }

    /// Reserves keys for `node` in a transaction of its own (`SharedStore.reserveRequestKeys`).
    public func reserveRequestKeys(_ keys: [KeyReservation], node: NodeID, staleBefore: Millis) throws
        -> [RequestKeySlot: KeyReservationOutcome] {
        guard !keys.isEmpty else { return [:] }
        return try connection.transaction(resolvesLostCommit: true) {
            let slots = keys.map(\.slot)
            try connection.send(WriteLocks.lock, [.text(Self.arrayLiteral(Array(Set(slots.map(Self.keyLock))).sorted()))])
            let found = Dictionary(Self.rows(try connection.query(RecordSQL.lookUp, Self.slotArrays(slots))).map { ($0.slot, $0) },
                                   uniquingKeysWith: { first, _ in first })
            let holders = Set(found.values.compactMap { $0.record == nil ? $0.node : nil }).filter { $0 != node }
            var alive: Set<NodeID> = []
            if !holders.isEmpty {
                let rows = try connection.query(RecordSQL.aliveNodes, [.text(Self.arrayLiteral(holders.map(\.rawValue)))])
                for row in 0..<rows.count { if let id = rows.text(row, 0) { alive.insert(NodeID(id)) } }
            }
            var outcomes: [RequestKeySlot: KeyReservationOutcome] = [:]
            for key in keys where outcomes[key.slot] == nil {
                if let row = found[key.slot] {
                    if let record = row.record {
                        outcomes[key.slot] = .recorded(record)
                        continue
                    }
                    if let holder = row.node, holder != node, alive.contains(holder), row.at >= staleBefore {
                        outcomes[key.slot] = .reservedElsewhere(holder)
                        continue
                    }
                }
                // Free, this node's already, or a node's whose lease ran out: this node's now.
                try connection.send(RecordSQL.reserve, [
                    .text(key.slot.owner.workspace), .text(key.slot.owner.user), .bytes(key.slot.key.bytes),
                    .text(key.fingerprint), .int(key.at), .text(node.rawValue),
                ])
                outcomes[key.slot] = .reserved
            }
            return outcomes
        }
    }

    /// The advisory lock a key is checked and recorded under (taken with the channels').
    static func keyLock(_ slot: RequestKeySlot) -> String {
        "key:\(slot.owner.workspace):\(slot.owner.user.utf8.count):\(slot.owner.user):\(slot.key.hex)"
    }

    /// The keys these writes record.
    static func recordedSlots(_ writes: [StoreWrite]) -> [RequestKeySlot] {
        var slots: [RequestKeySlot] = []
        for write in writes {
            let commands: [StoreCommand]
            switch write {
            case .persist(let persisted): commands = persisted
            case .commit(let commit): commands = commit.commands
            case .signal: continue
            }
            for command in commands { if let write = Self.keyWrite(command) { slots.append(write.slot) } }
        }
        return slots
    }

    /// The key a cluster node's command records, the node, and whether that node's reservation
    /// must be there (`recordKeyedRequest`: checked; `recordHeldRequest`: checked, and held; a
    /// single node's `recordRequest` replaces a stale record and is not).
    static func keyWrite(_ command: StoreCommand) -> (slot: RequestKeySlot, node: NodeID, held: Bool)? {
        switch command {
        case .coordination(.recordKeyedRequest(let record, let node, _)): (record.slot, node, false)
        case .coordination(.recordHeldRequest(let record, let holder)): (record.slot, holder, true)
        default: nil
        }
    }

    /// Queues the look-up of the keys a batch records; `found` is filled in with the next
    /// round trip (`KeysFound.conflicts`).
    func sendKeyCheck(_ slots: [RequestKeySlot], into found: KeysFound) throws {
        found.pending = true
        try connection.send(RecordSQL.lookUp, Self.slotArrays(slots)) { rows in
            found.pending = false
            for row in Self.rows(rows) { found.rows[row.slot] = row }
        }
    }

    /// Looks up again, and locks, the rows of the keys `commands` write for the node holding
    /// them (`recordHeldRequest`), as they stand at this point of the transaction: an earlier
    /// write of the batch may have released or recorded one since the batch's check, and a
    /// row locked here cannot be released by another transaction before this one ends. Their
    /// rows in `found` are replaced, so `KeysFound.conflicts` judges by them, as the memory
    /// store judges each commit by its state then. A round trip, only for such commands (a
    /// remote drop's settle, a drop's take-back).
    func refreshHeldKeys(in commands: [StoreCommand], _ found: KeysFound) throws {
        var slots: [RequestKeySlot] = []
        for command in commands { if let write = Self.keyWrite(command), write.held { slots.append(write.slot) } }
        guard !slots.isEmpty else { return }
        // Answers the batch's check too (it was sent first), then these rows replace its.
        let rows = Self.rows(try connection.query(RecordSQL.lookUpLocked, Self.slotArrays(slots)))
        for slot in slots { found.rows[slot] = nil }
        for row in rows { found.rows[row.slot] = row }
    }

    /// A record written for the node holding its key (`recordHeldRequest`): only over that
    /// node's reservation, never a new row. Checked and locked first (`refreshHeldKeys`).
    func writeHeldRecord(_ record: RequestRecord, holder: NodeID) throws {
        try connection.send(RecordSQL.recordOverHeldReservation, [
            .text(record.slot.owner.workspace), .text(record.slot.owner.user), .bytes(record.slot.key.bytes),
            .text(record.fingerprint), .text(json(record.result)), .int(record.at), .text(holder.rawValue),
        ])
    }

    func writeRecord(_ record: RequestRecord, node: NodeID?) throws {
        let values: [PostgresValue] = [
            .text(record.slot.owner.workspace), .text(record.slot.owner.user), .bytes(record.slot.key.bytes),
            .text(record.fingerprint), .text(json(record.result)), .int(record.at),
        ]
        if let node {
            try connection.send(RecordSQL.recordOverReservation, values + [.text(node.rawValue)])
        } else {
            try connection.send(RecordSQL.insert, values)
        }
    }

    func releaseKey(_ slot: RequestKeySlot, node: NodeID) throws {
        try connection.send(RecordSQL.release, [.text(slot.owner.workspace), .text(slot.owner.user),
                                                .bytes(slot.key.bytes), .text(node.rawValue)])
    }

    func forgetRecords(_ keys: [RecordedKey]) throws {
        try connection.send(RecordSQL.forget, Self.slotArrays(keys.map(\.slot))
                                + [.text(Self.arrayLiteral(keys.map { String($0.at) }))])
    }

    func pruneRecords(before: Millis, keepPerUser: Int) throws {
        try connection.send(RecordSQL.pruneOld, [.int(before)])
        try connection.send(RecordSQL.pruneMany, [.int(Int64(keepPerUser))])
    }

    /// Every record, oldest first (in `loadState`'s snapshot); reservations are not records.
    func loadRecords() throws -> [RequestRecord] {
        Self.rows(try connection.query(RecordSQL.all)).compactMap(\.record)
    }

    /// Sessions and document records as stored, by id.
    public func loadRecords(sessions: [SessionID], documents: [DocumentID]) throws -> RecordsRead {
        try connection.transaction(isolation: "REPEATABLE READ READ ONLY") {
            var read = RecordsRead()
            if !sessions.isEmpty {
                let rows = try connection.query(RecordSQL.sessionsByID, [.text(Self.arrayLiteral(sessions.map(\.rawValue)))])
                for row in 0..<rows.count {
                    let session = self.session(rows, row)
                    read.sessions[session.id] = session
                }
                read.missingSessions = sessions.filter { read.sessions[$0] == nil }
            }
            if !documents.isEmpty {
                let rows = try connection.query(RecordSQL.documentsByID, [.text(Self.arrayLiteral(documents.map(\.rawValue)))])
                for row in 0..<rows.count {
                    let document = record(rows, row)
                    read.documents[document.id] = document
                }
                read.missingDocuments = documents.filter { read.documents[$0] == nil }
            }
            return read
        }
    }

    private static func slotArrays(_ slots: [RequestKeySlot]) -> [PostgresValue] {
        [.text(arrayLiteral(slots.map(\.owner.workspace))), .text(arrayLiteral(slots.map(\.owner.user))),
         .text(arrayLiteral(slots.map(\.key.hex)))]
    }

    /// One stored row: a record, or a node's reservation.
    struct KeyRow {
        let slot: RequestKeySlot
        let record: RequestRecord?
        let node: NodeID?
        /// When it was recorded or reserved.
        let at: Millis
    }

    /// Rows of (workspace, user_name, key, fingerprint, result, created_at, node).
    private static func rows(_ rows: PostgresRows) -> [KeyRow] {
        var found: [KeyRow] = []
        for row in 0..<rows.count {
            let slot = RequestKeySlot(owner: OwnerKey(workspace: rows.text(row, 0) ?? "", user: rows.text(row, 1) ?? ""),
                                      key: RequestKey(bytes: rows.bytes(row, 2) ?? []))
            var record: RequestRecord?
            if let fingerprint = rows.text(row, 3), let text = rows.text(row, 4), case .success(let result) = JSONCodec.decode(text, acceptingEquivalentKeys: true) {
                record = RequestRecord(slot: slot, fingerprint: fingerprint, result: result, at: rows.int64(row, 5))
            }
            found.append(KeyRow(slot: slot, record: record, node: rows.text(row, 6).map(NodeID.init), at: rows.int64(row, 5)))
        }
        return found
    }

    /// What a batch's key check found, filled in when its round trip is answered.
    final class KeysFound {
        var rows: [RequestKeySlot: KeyRow] = [:]
        var pending = false

        /// What stands in the way of the records `commands` write: the records of their keys,
        /// and whether another node reserved one (or, for a record written for the node that
        /// holds its key, `recordHeldRequest`, whether that reservation is gone: those rows
        /// are read again first, `refreshHeldKeys`). The check is answered first if need be.
        func conflicts(in commands: [StoreCommand], _ connection: PostgresConnection) throws
            -> (records: [RequestRecord], heldElsewhere: Bool) {
            let writes = commands.compactMap(PostgresStore.keyWrite)
            guard !writes.isEmpty else { return ([], false) }
            if pending { try connection.answer() }
            var records: [RequestRecord] = []
            var heldElsewhere = false
            for (slot, node, held) in writes {
                guard let row = rows[slot] else {
                    // Written for another node: its reservation is gone (released, or never made).
                    if held { heldElsewhere = true }
                    continue
                }
                if let record = row.record { records.append(record) }
                if row.record == nil, row.node != node { heldElsewhere = true }
            }
            return (records, heldElsewhere)
        }
    }

    private enum WriteLocks {
        static let lock = "SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))::bigint FROM unnest($1::text[]) AS k"
    }

    private enum RecordSQL {
        static let columns = "workspace, user_name, key, fingerprint, result, created_at"
        static let lookUp = """
            SELECT \(columns), node FROM request_records
            WHERE (workspace, user_name, key) IN (
                SELECT w, u, decode(k, 'hex') FROM unnest($1::text[], $2::text[], $3::text[]) AS t(w, u, k))
            """
        /// `lookUp`, with the rows locked until the transaction ends.
        static let lookUpLocked = lookUp + " FOR UPDATE OF request_records"
        static let nowMs = "(extract(epoch FROM now()) * 1000)::bigint"
        static let aliveNodes = "SELECT id FROM nodes WHERE id = ANY($1::text[]) AND lease_until >= \(nowMs)"
        /// A reservation: new, or over one of this node's or a dead node's (checked under the lock).
        static let reserve = """
            INSERT INTO request_records (workspace, user_name, key, fingerprint, result, created_at, node)
            VALUES ($1, $2, $3, $4, NULL, $5, $6)
            ON CONFLICT (workspace, user_name, key) DO UPDATE
                SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, node = excluded.node
                WHERE request_records.result IS NULL
            """
        /// A single node's record: over a stale one of the key (`StoreCommand.recordRequest`).
        static let insert = """
            INSERT INTO request_records (\(columns)) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (workspace, user_name, key) DO UPDATE
                SET fingerprint = excluded.fingerprint, result = excluded.result, created_at = excluded.created_at,
                    node = NULL
            """
        /// Over this node's reservation ($7), or new.
        static let recordOverReservation = """
            INSERT INTO request_records (\(columns)) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (workspace, user_name, key) DO UPDATE
                SET fingerprint = excluded.fingerprint, result = excluded.result, created_at = excluded.created_at,
                    node = NULL
                WHERE request_records.result IS NULL AND request_records.node = $7
            """
        /// Over the reservation of the node it is written for ($7) only.
        static let recordOverHeldReservation = """
            UPDATE request_records
            SET fingerprint = $4, result = $5, created_at = $6, node = NULL
            WHERE workspace = $1 AND user_name = $2 AND key = $3 AND node = $7 AND result IS NULL
            """
        static let release = """
            DELETE FROM request_records
            WHERE workspace = $1 AND user_name = $2 AND key = $3 AND node = $4 AND result IS NULL
            """
        static let all = "SELECT \(columns), node FROM request_records WHERE result IS NOT NULL ORDER BY created_at"
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
        static let sessionsByID = """
            SELECT \(PostgresStore.ReadSQL.sessionColumns) FROM sessions WHERE id = ANY($1::text[]) ORDER BY id
            """
        static let documentsByID = """
            SELECT \(PostgresStore.ReadSQL.documentColumns) FROM documents AS d WHERE d.id = ANY($1::text[]) ORDER BY d.id
            """
    }
}
