// Threading: owned by the runtime and touched on the service thread only, like the hub.
import Dispatch
import PanesCore

/// Latency histograms the runtime keeps for `/metrics`: per request type from receipt to the
/// reply leaving (so it includes waiting for durability), connects from the socket opening to
/// the `connect` reply, fan-out from a commit being durable to its last message queued, and
/// the time each turn of the service loop spends on Panes' work.
struct RuntimeMetrics {
    private struct Pending {
        /// An index into `typeNames`.
        let type: Int
        let at: UInt64
    }

    /// A connection's requests waiting for their replies: nearly always one at a time, held
    /// without a table of its own (a table made and freed per request was a tenth of a
    /// resume's bookkeeping, issue 27).
    private enum InFlight {
        case one(RequestID, Pending)
        case many([RequestID: Pending])
    }

    /// What is timed on one connection: since it opened, until its `connect` is answered, and
    /// its requests until their replies. One entry for both, read and changed in place, so a
    /// resume (opened, its `connect` received, answered) hashes the connection three times
    /// rather than six.
    private struct Timing {
        var openedAt: UInt64?
        var inFlight: InFlight?

        var isIdle: Bool { openedAt == nil && inFlight == nil }

        mutating func received(_ id: RequestID, _ started: Pending) {
            switch inFlight {
            case nil:
                inFlight = .one(id, started)
            case .one(let other, _) where other == id:
                inFlight = .one(id, started)
            case .one(let other, let earlier):
                inFlight = .many([other: earlier, id: started])
            case .many(var table):
                inFlight = nil  // the table uniquely referenced while it changes
                table[id] = started
                inFlight = .many(table)
            }
        }

        /// When the request `id` was received; nil when it is not waiting (never asked, or
        /// answered already).
        mutating func replied(_ id: RequestID) -> Pending? {
            switch inFlight {
            case .one(let other, let only) where other == id:
                inFlight = nil
                return only
            case .many(var table):
                inFlight = nil  // the table uniquely referenced while it changes
                guard let found = table.removeValue(forKey: id) else {
                    inFlight = .many(table)
                    return nil
                }
                // An idle connection keeps no table: an emptied one still holds its storage.
                if !table.isEmpty { inFlight = .many(table) }
                return found
            default:
                return nil
            }
        }
    }

    /// The request types histograms are kept for, by index (`Pending.type`): `Hub.requestTypes`
    /// in its order, so a request's `typeIndex` is its index here, then one for any other type.
    /// A request is timed and its reply counted in an array, with no string hashed.
    private static let typeNames = Hub.requestTypes + ["(invalid)"]
    private static let connectType = Hub.requestTypes.firstIndex(of: ConnectRequest.type)!
    private var timings: [UInt64: Timing] = [:]
    private var requestDurations = [Histogram?](repeating: nil, count: RuntimeMetrics.typeNames.count)
    private(set) var connects = Histogram()
    private(set) var fanOut = Histogram()
    private(set) var turns = Histogram()

    /// Request durations by type, for the types that had a reply.
    var acks: [String: Histogram] {
        var acks: [String: Histogram] = [:]
        for (index, histogram) in requestDurations.enumerated() {
            if let histogram { acks[Self.typeNames[index]] = histogram }
        }
        return acks
    }

    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    mutating func opened(_ connection: UInt64) {
        timings[connection, default: Timing()].openedAt = Self.now
    }

    /// A frame that reads as a request (`Hub.takeReceivedRequest`: its `id`, and its type's
    /// index in `Hub.requestTypes`): its reply will be timed, under its type or, for a `type`
    /// that names no request, "(invalid)".
    mutating func received(_ id: RequestID, typeIndex: Int?, on connection: UInt64, at time: UInt64) {
        let type = typeIndex ?? Self.typeNames.count - 1
        timings[connection, default: Timing()].received(id, Pending(type: type, at: time))
    }

    mutating func replied(_ id: RequestID, on connection: UInt64) {
        guard let index = timings.index(forKey: connection), let started = timings.values[index].replied(id) else { return }
        let now = Self.now
        if requestDurations[started.type] == nil { requestDurations[started.type] = Histogram() }
        requestDurations[started.type]!.observe(nanoseconds: now - started.at)  // in place: no copy of its buckets
        if started.type == Self.connectType, let open = timings.values[index].openedAt {
            timings.values[index].openedAt = nil
            connects.observe(nanoseconds: now - open)
        }
        if timings.values[index].isIdle { timings.remove(at: index) }
    }

    mutating func closed(_ connection: UInt64) {
        timings[connection] = nil
    }

    mutating func fannedOut(since committed: UInt64) {
        fanOut.observe(nanoseconds: Self.now - committed)
    }

    mutating func turn(since start: UInt64) {
        turns.observe(nanoseconds: Self.now - start)
    }
}
