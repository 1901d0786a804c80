// Threading: a value owned by the runtime, on the service thread only.

/// The one place output waits for durability (the contract is `Effect`'s): persists are
/// numbered as they are handed to the store thread, and output that reports stored state
/// leaves only once every persist numbered before it is durable, in the order it was given.
///
/// Output about a channel commit needs no rule of its own: the hub makes it only when the
/// commit's outcome comes back (`HubEvent.committed`), which the store thread posts once the
/// transaction is durable; it then passes this gate like any other output.
///
/// One kind of output waits for less: an answer that says nothing was applied because the
/// store failed (`Effect.sendUnapplied`) reveals no stored state, so it waits only for output
/// already held for its own connection (replies and events keep their order on a connection),
/// never for other connections' persists.
struct DurabilityGate<Output> {
    /// The number of the last persist handed to the store thread, and of the last durable one.
    private(set) var submitted: UInt64 = 0
    private(set) var durable: UInt64 = 0
    /// Output waiting, in order, each with the persist it waits for and its connections.
    private var held: [(sequence: UInt64, output: Output, connections: [UInt64])] = []
    private var head = 0
    private var perConnection: [UInt64: Int] = [:]

    /// Nothing waits: every persist is durable and no output is held.
    var isClear: Bool { head == held.count && durable == submitted }

    /// Outputs held now.
    var heldCount: Int { held.count - head }

    /// Outputs held now for one connection.
    func heldCount(for connection: UInt64) -> Int { perConnection[connection, default: 0] }

    /// Numbers a persist handed to the store thread; output given after this waits for it.
    mutating func persistSubmitted() -> UInt64 {
        submitted += 1
        return submitted
    }

    /// Output that waits for every persist submitted before it: returned when it may leave
    /// now, else held (nil).
    mutating func pass(_ output: Output, to connections: [UInt64]) -> Output? {
        if isClear { return output }
        hold(output, connections)
        return nil
    }

    /// Output that says nothing was applied: returned when nothing is held for its
    /// connections, else held behind what is (nil).
    mutating func passUnapplied(_ output: Output, to connections: [UInt64]) -> Output? {
        if connections.allSatisfy({ perConnection[$0] == nil }) { return output }
        hold(output, connections)
        return nil
    }

    /// Persists up to `sequence` are durable: returns the output that may leave now, in order.
    mutating func becameDurable(_ sequence: UInt64) -> [(output: Output, connections: [UInt64])] {
        durable = max(durable, sequence)
        var released: [(output: Output, connections: [UInt64])] = []
        while head < held.count && held[head].sequence <= durable {
            let entry = held[head]
            released.append((entry.output, entry.connections))
            for connection in entry.connections {
                let count = perConnection[connection, default: 1] - 1
                perConnection[connection] = count > 0 ? count : nil
            }
            head += 1
        }
        if head == held.count {
            held.removeAll(keepingCapacity: held.capacity <= 4096)
            head = 0
        }
        return released
    }

    /// Forgets everything held and counts every persist durable (a node whose lease ended: what
    /// waited is never sent).
    mutating func dropAll() {
        held.removeAll()
        head = 0
        perConnection.removeAll()
        durable = submitted
    }

    private mutating func hold(_ output: Output, _ connections: [UInt64]) {
        held.append((submitted, output, connections))
        for connection in connections { perConnection[connection, default: 0] += 1 }
    }
}
