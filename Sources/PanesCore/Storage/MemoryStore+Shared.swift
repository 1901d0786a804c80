/// The shared-store side of `MemoryStore`, so two hubs on one memory store behave as two
/// nodes on one database: record changes, change logs, key reservations, node leases.
extension MemoryStore: SharedStore {
    public func loadRecordChanges(after cursor: Int64) throws -> RecordChanges {
        var changes = RecordChanges(cursor: recordSequence)
        var seen: Set<RecordKey> = []
        // Newest first, so each record is reported once, as it is now; then back to oldest first.
        for entry in recordLog.reversed() where entry.sequence > cursor {
            switch entry.record {
            case .session(let id):
                guard seen.insert(entry.record).inserted else { continue }
                if let session = sessions[id] {
                    changes.sessions.append(session)
                    changes.claims[id] = claims[id] ?? SessionClaim(node: nil, epoch: 0)
                } else {
                    changes.deletedSessions.append(id)
                }
            case .document(let id):
                guard seen.insert(entry.record).inserted else { continue }
                if let document = documents[id] {
                    changes.documents.append(document.record)
                    changes.access[id] = access[id] ?? DocumentAccess()
                } else {
                    changes.deletedDocuments.append(id)
                }
            }
        }
        changes.sessions.reverse()
        changes.deletedSessions.reverse()
        changes.documents.reverse()
        changes.deletedDocuments.reverse()
        return changes
    }

    public func loadPreferenceChanges(_ domain: PreferenceDomain, after version: Int64) throws -> [PreferenceChange]? {
        (preferenceLog[domain] ?? []).filter { $0.version > version }
    }

    public func loadOperations(_ id: DocumentID, after revision: Int64) throws -> [StoredOperation]? {
        guard let document = documents[id] else { return nil }
        guard revision >= document.record.revision
                || document.operations.first.map({ $0.revision <= revision + 1 }) == true else { return nil }
        return document.operations.filter { $0.revision > revision }
    }

    public func reserveRequestKeys(_ keys: [KeyReservation], node: NodeID, staleBefore: Millis) throws
        -> [RequestKeySlot: KeyReservationOutcome] {
        var outcomes: [RequestKeySlot: KeyReservationOutcome] = [:]
        for key in keys {
            if let record = requestRecords[key.slot] {
                outcomes[key.slot] = .recorded(record)
            } else if let held = reservations[key.slot], held.node != node, held.at >= staleBefore,
                      let lease = nodeLeases[held.node], lease >= now() {
                let holder = held.node
                outcomes[key.slot] = .reservedElsewhere(holder)
            } else {
                // Free, this node's already, or a dead node's: this node's now.
                reservations[key.slot] = Reservation(node: node, at: key.at)
                outcomes[key.slot] = .reserved
            }
        }
        return outcomes
    }

    /// A deleted session's held drops: its user's content, gone with it (`.deleteSession`).
    func forgetHeldDrops(of session: SessionID) {
        for key in heldDrops.keys where key.session == session {
            remember(key, in: \.heldDrops)
            heldDrops[key] = nil
        }
    }

    private func pruneHeldDrops(before: Millis) {
        for (key, kept) in heldDrops where kept.keptUntil < before {
            remember(key, in: \.heldDrops)
            heldDrops[key] = nil
        }
    }

    public func loadHeldDrops(_ session: SessionID, now: Millis) throws -> [HeldDrop] {
        heldDrops.values.filter { $0.session == session && $0.keptUntil >= now }
            .sorted { $0.keptUntil != $1.keptUntil ? $0.keptUntil < $1.keptUntil
                : Identifier.less($0.drag.rawValue, $1.drag.rawValue) }
    }

    public func loadRecords(sessions: [SessionID], documents: [DocumentID]) throws -> RecordsRead {
        var read = RecordsRead()
        for id in sessions {
            if let session = self.sessions[id] { read.sessions[id] = session } else { read.missingSessions.append(id) }
        }
        for id in documents {
            if let document = self.documents[id] { read.documents[id] = document.record } else { read.missingDocuments.append(id) }
        }
        return read
    }

    public func register(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        let now = now()
        nodeLeases[node] = now + Millis(leaseMs)
        nodeLocks.insert(node)
        return try checkNodes(node: node, leaseMs: leaseMs)
    }

    public func heartbeat(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        let now = now()
        guard let until = nodeLeases[node], until >= now else {
            // Ended, by another node or by the clock: it stays ended (`SharedStore.heartbeat`).
            if nodeLeases[node] != nil { nodeLeases[node] = -1 }
            throw NodeRevoked(node: node)
        }
        nodeLeases[node] = now + Millis(leaseMs)
        nodeLocks.insert(node)
        return try checkNodes(node: node, leaseMs: leaseMs)
    }

    /// Ends the lease of every other node whose lease ran out or whose lock is free, and
    /// returns the nodes whose lease has ended. (One thread: no transaction of a fenced node
    /// can be under way meanwhile, which PostgreSQL orders with a row lock, unless a test
    /// says one is: `holdRow(of:)`.)
    public func checkNodes(node: NodeID, leaseMs: Int) throws -> [NodeID] {
        let now = now()
        for (other, until) in nodeLeases where other != node && until >= 0 && !rowsHeld.contains(other)
            && (until < now || !nodeLocks.contains(other)) {
            nodeLeases[other] = -1
        }
        return nodeLeases.filter { $0.key != node && $0.value < 0 }.map(\.key).sorted()
    }

    public func liveNodes() throws -> [NodeID] { nodeLeases.filter { $0.value >= now() }.map(\.key).sorted() }

    public func fence(as node: NodeID?, leaseMs: Int) {
        fencingNode = node
    }

    /// Test hook: the node's connection to the store dropped (its process was killed), so its
    /// liveness lock is free.
    public func dropConnection(of node: NodeID) {
        nodeLocks.remove(node)
    }

    /// Test hook: a transaction of the node is under way in the store and holds its row (in
    /// PostgreSQL, a renewal cut off between its round trips): ending its lease waits until
    /// `releaseRow(of:)`, when the database has ended that transaction.
    public func holdRow(of node: NodeID) {
        rowsHeld.insert(node)
    }

    public func releaseRow(of node: NodeID) {
        rowsHeld.remove(node)
    }
}

/// The coordination's channels and commands (`CoordinationChannel`, `CoordinationCommand`),
/// which the memory store applies as a shared store does: two hubs on it are two nodes.
extension MemoryStore {
    /// A lease's epoch (0 when never claimed), a drag's ending (1 once ended, 2 once a drop
    /// onto a window on another node was settled), a session's record revision (-1 when there
    /// is no such session).
    func version(of channel: CoordinationChannel) -> Int64 {
        switch channel {
        case .session(let id): claims[id]?.epoch ?? 0
        case .drag(let id): settledDrops[id] != nil ? 2 : dragEnds[id] == nil ? 0 : 1
        case .sessionRecord(let id): sessions[id]?.revision ?? -1
        }
    }

    func apply(_ command: CoordinationCommand) {
        switch command {
        case .claimSession(let id, let claim):
            if deletedSessions[id] != nil { return }
            remember(id, in: \.claims)
            claims[id] = claim
            logRecord(.session(id))
            if claim.node != nil, heldDrops.keys.contains(where: { $0.session == id }) { sessionsWithHeldDrops.append(id) }
        case .endDrag(let id, let expiresAt):
            for (ended, expiry) in dragEnds where expiry < expiresAt - DragEnd.keptMs {
                remember(ended, in: \.dragEnds)
                dragEnds[ended] = nil
                remember(ended, in: \.settledDrops)
                settledDrops[ended] = nil
            }
            remember(Identifier(id), in: \.dragEnds)
            dragEnds[id] = expiresAt
        case .settleDrop(let id):
            guard let expiresAt = dragEnds[Identifier(id)] else { return }
            remember(Identifier(id), in: \.settledDrops)
            settledDrops[Identifier(id)] = expiresAt
        case .recordKeyedRequest(let record, _, _), .recordHeldRequest(let record, _):
            putRecord(record)
        case .holdDrop(let held, let forgetBefore):
            pruneHeldDrops(before: forgetBefore)
            guard heldDrops[held.key] == nil else { return }
            remember(held.key, in: \.heldDrops)
            heldDrops[held.key] = held
        case .pruneHeldDrops(let before):
            pruneHeldDrops(before: before)
        case .releaseDrop(let key):
            remember(key, in: \.heldDrops)
            heldDrops[key] = nil
        case .releaseRequestKey(let slot, let node):
            guard reservations[slot]?.node == node else { return }
            remember(slot, in: \.reservations)
            reservations[slot] = nil
        }
    }
}

extension MemoryStore {
    /// A key a node reserved (`reserveRequestKeys`), and when.
    struct Reservation {
        let node: NodeID
        let at: Millis
    }
}
