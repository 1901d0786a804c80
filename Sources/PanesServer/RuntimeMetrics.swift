// Threading: owned by the runtime and touched on the service thread only, like the hub.
import Dispatch
import PanesCore

/// Latency histograms the runtime keeps for `/metrics`: per request type from receipt to the
/// reply leaving (so it includes waiting for durability), connects from the socket opening to
/// the `connect` reply, fan-out from a commit being durable to its last message queued, and
/// the time each turn of the service loop spends on Panes' work.
struct RuntimeMetrics {
    private struct Pending {
        let type: String
        let at: UInt64
    }

    /// A connection's requests waiting for their replies: nearly always one at a time, held
    /// without a table of its own (a table made and freed per request was a tenth of a
    /// resume's bookkeeping, issue 27).
    private enum InFlight {
        case one(RequestID, Pending)
        case many([RequestID: Pending])
    }

    private static let knownTypes = Set(Hub.requestTypes)
    private var pending: [UInt64: InFlight] = [:]
    private var opened: [UInt64: UInt64] = [:]
    private(set) var acks: [String: Histogram] = [:]
    private(set) var connects = Histogram()
    private(set) var fanOut = Histogram()
    private(set) var turns = Histogram()

    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    mutating func opened(_ connection: UInt64) {
        opened[connection] = Self.now
    }

    /// A frame that reads as a request: its reply will be timed.
    mutating func received(_ json: JSONValue, on connection: UInt64, at time: UInt64) {
        guard let id = json["id"].flatMap(RequestID.init(json:)) else { return }
        let type = json["type"]?.stringValue.flatMap { Self.knownTypes.contains($0) ? $0 : nil } ?? "(invalid)"
        let started = Pending(type: type, at: time)
        switch pending[connection] {
        case nil:
            pending[connection] = .one(id, started)
        case .one(let other, _) where other == id:
            pending[connection] = .one(id, started)
        case .one(let other, let earlier):
            pending[connection] = .many([other: earlier, id: started])
        case .many(var table):
            pending[connection] = nil  // the table uniquely referenced while it changes
            table[id] = started
            pending[connection] = .many(table)
        }
    }

    mutating func replied(_ id: RequestID, on connection: UInt64) {
        let started: Pending
        switch pending[connection] {
        case .one(let other, let only) where other == id:
            started = only
            pending[connection] = nil
        case .many(var table):
            pending[connection] = nil  // the table uniquely referenced while it changes
            guard let found = table.removeValue(forKey: id) else {
                pending[connection] = .many(table)
                return
            }
            started = found
            // An idle connection keeps no table: an emptied one still holds its storage.
            if !table.isEmpty { pending[connection] = .many(table) }
        default:
            return
        }
        let now = Self.now
        acks[started.type, default: Histogram()].observe(nanoseconds: now - started.at)
        if started.type == ConnectRequest.type, let open = opened.removeValue(forKey: connection) {
            connects.observe(nanoseconds: now - open)
        }
    }

    mutating func closed(_ connection: UInt64) {
        pending[connection] = nil
        opened[connection] = nil
    }

    mutating func fannedOut(since committed: UInt64) {
        fanOut.observe(nanoseconds: Self.now - committed)
    }

    mutating func turn(since start: UInt64) {
        turns.observe(nanoseconds: Self.now - start)
    }
}
