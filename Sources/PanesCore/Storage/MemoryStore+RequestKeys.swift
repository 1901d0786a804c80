/// The memory store's keyed requests: their records and the keys nodes reserved. The cluster's
/// keyed commands (`recordKeyedRequest`, `releaseRequestKey`) are applied beside the shared side
/// (`MemoryStore+Shared.swift`), through `putRecord`.
extension MemoryStore {
    /// What stands in the way of the request records these commands write: records of their
    /// keys, and whether another node reserved one.
    func keyConflicts(in commands: [StoreCommand]) -> (records: [RequestRecord], heldElsewhere: Bool) {
        var found: [RequestRecord] = []
        var heldElsewhere = false
        for command in commands {
            // A single node's record replaces a stale one; only a cluster node's is checked.
            switch command {
            case .coordination(.recordKeyedRequest(let record, let node, _)):
                if let record = requestRecords[record.slot] { found.append(record) }
                if let reservation = reservations[record.slot], reservation.node != node { heldElsewhere = true }
            case .coordination(.recordHeldRequest(let record, let holder)):
                // Only over the holder's reservation, still there.
                if let record = requestRecords[record.slot] {
                    found.append(record)
                } else if reservations[record.slot]?.node != holder {
                    heldElsewhere = true
                }
            default:
                continue
            }
        }
        return (found, heldElsewhere)
    }

    /// Keeps a request's record, over any reservation of its key.
    func putRecord(_ record: RequestRecord) {
        remember(record.slot, in: \.requestRecords)
        remember(record.slot, in: \.reservations)
        requestRecords[record.slot] = record
        reservations[record.slot] = nil
    }

    /// Keyed requests' records and reservations.
    func applyToRequestKeys(_ command: StoreCommand) {
        switch command {
        case .recordRequest(let record):
            putRecord(record)
        case .forgetRequestRecords(let keys):
            for key in keys where requestRecords[key.slot].map({ $0.at <= key.at }) == true {
                remember(key.slot, in: \.requestRecords)
                requestRecords[key.slot] = nil
            }
        case .pruneRequestRecords(let before, let keepPerUser):
            for (slot, reservation) in reservations where reservation.at < before {
                remember(slot, in: \.reservations)
                reservations[slot] = nil
            }
            var byOwner: [OwnerKey: [RequestRecord]] = [:]
            for record in requestRecords.values { byOwner[record.slot.owner, default: []].append(record) }
            for records in byOwner.values {
                let newestFirst = records.sorted { $0.at > $1.at }
                for (index, record) in newestFirst.enumerated() where record.at < before || index >= keepPerUser {
                    remember(record.slot, in: \.requestRecords)
                    requestRecords[record.slot] = nil
                }
            }
        default:
            break
        }
    }
}
