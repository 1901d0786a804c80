// Threading: the service thread's, like the rest of the runtime (ServerRuntime.swift).
import Logging
import PanesCore
import PanesTransport

/// Output through the durability gate (`DurabilityGate`), and the store thread's reports.
extension ServerRuntime {
    /// Output that waits for every persist given before it (`Effect`'s contract).
    func emit(_ output: Output) {
        // Nothing waits (nearly always): no list of the output's connections is made.
        if gate.isClear { return deliver(output) }
        guard let output = gate.pass(output, to: output.connections) else { return held(output) }
        deliver(output)
    }

    /// An answer that says nothing was applied (`Effect.sendUnapplied`): it waits only for
    /// output held for its own connection.
    func emitUnapplied(_ output: Output) {
        if gate.heldCount == 0 { return deliver(output) }
        guard let output = gate.passUnapplied(output, to: output.connections) else { return held(output) }
        deliver(output)
    }

    /// Output was held: a client that writes faster than the disk commits is not read from
    /// until its answers drain, instead of growing what the server holds for it without end.
    private func held(_ output: Output) {
        for connection in output.connections where gate.heldCount(for: connection) >= settings.maxHeldPerConnection {
            if pausedConnections.insert(connection).inserted { transport.pauseReading(connection) }
        }
    }

    /// Output held left; reading resumes once a paused connection is half drained.
    private func released(_ connections: [UInt64]) {
        for connection in connections where gate.heldCount(for: connection) <= settings.maxHeldPerConnection / 2 {
            if pausedConnections.remove(connection) != nil { transport.resumeReading(connection) }
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
        if !report.heldDropsFound.isEmpty { effects += hub.handle(.heldDropsFound(report.heldDropsFound)) }
        for (id, outcome) in report.outcomes { effects += hub.handle(.committed(id, outcome)) }
        perform(effects)
        metrics.fannedOut(since: report.committedAt)
        checkDrain()
        metrics.turn(since: start)
    }

    func becameDurable(_ sequence: UInt64) {
        for (output, connections) in gate.becameDurable(sequence) {
            deliver(output)
            released(connections)
        }
    }
}
