// Threading: as the store's (the store thread only).
public import PanesCore

/// Drops held for their windows' sessions (`HeldDrop`): written and released by coordination
/// commands (`PostgresStore+Coordination.swift`), read here when a node takes a session over. A
/// claim's statement says whether drops are held for its session (`WriteSQL.claimSession`, its
/// second column), returned with the apply's outcomes (`AppliedWrites.heldDropsFound`).
extension PostgresStore {
    /// The drops held for a session (`SharedStore.loadHeldDrops`), oldest first.
    public func loadHeldDrops(_ session: SessionID, now: Millis) throws -> [HeldDrop] {
        let rows = try connection.query(WriteSQL.heldDrops, [.text(session.rawValue), .int(now)])
        var held: [HeldDrop] = []
        for row in 0..<rows.count {
            // A row that does not read as an event object (written by no build) is left to expire.
            guard let drag = rows.text(row, 0), let event = decode(rows.text(row, 1))?.objectValue else { continue }
            held.append(HeldDrop(session: session, drag: Identifier(drag), event: event, keptUntil: rows.int64(row, 2)))
        }
        return held
    }
}
