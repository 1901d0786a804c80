import PanesCore

/// The coordination's channels and commands (`CoordinationChannel`, `CoordinationCommand`):
/// leases, drag endings and settled remote drops, session records, and request keys checked against other nodes'.
/// Store thread only, like the rest of the store.
extension PostgresStore {
    /// A session's lease epoch (0 when never claimed), a drag's ending (1 once ended, 2 once a
    /// drop onto a window on another node was settled), a session's record revision (-1 when
    /// there is no such session).
    func version(of channel: CoordinationChannel) throws -> Int64 {
        switch channel {
        case .session(let id):
            try connection.integer(WriteSQL.sessionEpoch, [.text(id.rawValue)]) ?? 0
        case .drag(let id):
            try connection.integer(WriteSQL.dragEnded, [.text(id.rawValue)]) ?? 0
        case .sessionRecord(let id):
            // The row stays locked to the commit: no other write of it can slip in between.
            try connection.integer(WriteSQL.sessionRevision, [.text(id.rawValue)]) ?? -1
        }
    }

    func write(_ command: CoordinationCommand, _ batch: inout Batch) throws {
        switch command {
        case .claimSession(let id, let claim):
            // As `record` does, and the statement's second column: drops held for the session.
            let (cursor, found) = (batch.cursor, batch.heldDropsFound)
            cursor.unanswered += 1
            try connection.send(WriteSQL.claimSession,
                                [.text(id.rawValue), claim.node.map { .text($0.rawValue) } ?? .null, .int(claim.epoch)]) { rows in
                cursor.unanswered -= 1
                cursor.advance(to: rows.count > 0 ? rows.optionalInt64(0, 0) : nil)
                if rows.count > 0, rows.optionalInt64(0, 1) == 1 { found.sessions.append(id) }
            }
            batch.moved(.coordination(.session(id)), to: claim.epoch)
        case .endDrag(let id, let expiresAt):
            try connection.send(WriteSQL.pruneDragEnds, [.int(expiresAt - DragEnd.keptMs)])
            try connection.send(WriteSQL.endDrag, [.text(id), .int(expiresAt)])
        case .settleDrop(let id):
            try connection.send(WriteSQL.settleDrop, [.text(id)])
        case .recordKeyedRequest(let record, let node, _):
            try writeRecord(record, node: node)
        case .recordHeldRequest(let record, let holder):
            // Checked first, its row locked (`refreshHeldKeys`, `KeysFound.conflicts`): the
            // holder's reservation is there, and this writes over it or not at all.
            try writeHeldRecord(record, holder: holder)
        case .holdDrop(let held, let forgetBefore):
            try connection.send(WriteSQL.pruneHeldDrops, [.int(forgetBefore)])
            try connection.send(WriteSQL.holdDrop, [.text(held.session.rawValue), .text(held.drag.rawValue),
                                                    .text(json(.object(held.event))), .int(held.keptUntil)])
        case .pruneHeldDrops(let before):
            try connection.send(WriteSQL.pruneHeldDrops, [.int(before)])
        case .releaseDrop(let key):
            try connection.send(WriteSQL.releaseDrop, [.text(key.session.rawValue), .text(key.drag.rawValue)])
        case .releaseRequestKey(let slot, let node):
            try releaseKey(slot, node: node)
        }
    }
}
