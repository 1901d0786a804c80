// Threading: owned by the runtime and touched on the service thread only, like the hub.
import PanesCore
import PanesThreads
import PanesTransport

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
    /// By connection number (`ConnectionTable`: the transport's numbers, not SipHashed).
    private var timings = ConnectionTable<Timing>()
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

    /// Nanoseconds on the monotonic clock (`CLOCK_MONOTONIC`), read straight from it: every
    /// time the runtime and the store thread stamp for these histograms comes from here, so
    /// they compare (five reads a resume; `DispatchTime.now()` took twice the instructions).
    static var now: UInt64 { MonotonicInstant.now().nanoseconds }

    /// A connection opened at `time` (the start of the turn that reports it, read once for both).
    mutating func opened(_ connection: UInt64, at time: UInt64 = RuntimeMetrics.now) {
        timings.update(connection) { timing in
            if timing == nil { timing = Timing() }
            timing!.openedAt = time
        }
    }

    /// A frame that reads as a request (`Hub.takeReceivedRequest`: its `id`, and its type's
    /// index in `Hub.requestTypes`): its reply will be timed, under its type or, for a `type`
    /// that names no request, "(invalid)".
    mutating func received(_ id: RequestID, typeIndex: Int?, on connection: UInt64, at time: UInt64) {
        let type = typeIndex ?? Self.typeNames.count - 1
        timings.update(connection) { timing in
            if timing == nil { timing = Timing() }
            timing!.received(id, Pending(type: type, at: time))
        }
    }

    mutating func replied(_ id: RequestID, on connection: UInt64) {
        // The connection's entry changed in place and, once idle, removed, with one probe.
        let (started, opened) = timings.update(connection) { timing -> (Pending?, UInt64?) in
            guard let started = timing?.replied(id) else { return (nil, nil) }
            var opened: UInt64?
            if started.type == Self.connectType {
                opened = timing!.openedAt
                timing!.openedAt = nil
            }
            if timing!.isIdle { timing = nil }
            return (started, opened)
        }
        guard let started else { return }
        let now = Self.now
        if requestDurations[started.type] == nil { requestDurations[started.type] = Histogram() }
        requestDurations[started.type]!.observe(nanoseconds: now - started.at)  // in place: no copy of its buckets
        if let opened { connects.observe(nanoseconds: now - opened) }
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
