// Threading: the service thread's, like the rest of the runtime (ServerRuntime.swift).
import Logging
import PanesCore
import PanesTransport

/// Output held until the persists before it are durable, and the store thread's reports.
extension ServerRuntime {
    func emit(_ output: Output) {
        if heldHead == held.count && durableSequence == submittedSequence {
            deliver(output)
        } else {
            held.append((submittedSequence, output))
            for connection in output.connections {
                let count = heldPerConnection[connection, default: 0] + 1
                heldPerConnection[connection] = count
                // A client that writes faster than the disk commits is not read from until its
                // answers drain, instead of growing what the server holds for it without end.
                if count >= settings.maxHeldPerConnection, pausedConnections.insert(connection).inserted {
                    transport.pauseReading(connection)
                }
            }
        }
    }

    /// Counts a held output as delivered; reading resumes once a paused connection is half drained.
    func released(_ output: Output) {
        for connection in output.connections {
            let count = heldPerConnection[connection, default: 1] - 1
            heldPerConnection[connection] = count > 0 ? count : nil
            if count <= settings.maxHeldPerConnection / 2, pausedConnections.remove(connection) != nil {
                transport.resumeReading(connection)
            }
        }
    }

    /// A transaction is durable: releases what waited for its persists, then lets the hub
    /// apply its commits. Runs on the service thread (posted by the store thread).
    func applied(_ report: StoreReport) {
        // Reports of the hub that was given up: nothing of them is said to anyone.
        guard rejoining == nil else { return }
        let start = RuntimeMetrics.now
        if let durable = report.durable { becameDurable(durable) }
        if webhooksPending {
            webhooksPending = false
            webhooksWritten?()
        }
        // One list, so that every next batch these outcomes start goes before any of their frames.
        var effects: [Effect] = []
        for (id, outcome) in report.outcomes { effects += hub.handle(.committed(id, outcome)) }
        perform(effects)
        metrics.fannedOut(since: report.committedAt)
        checkDrain()
        metrics.turn(since: start)
    }

    func becameDurable(_ sequence: UInt64) {
        durableSequence = max(durableSequence, sequence)
        while heldHead < held.count && held[heldHead].sequence <= durableSequence {
            deliver(held[heldHead].output)
            released(held[heldHead].output)
            heldHead += 1
        }
        if heldHead == held.count {
            held.removeAll(keepingCapacity: held.capacity <= 4096)
            heldHead = 0
        }
    }
}
