// Threading: the store thread's (see StoreWorker.swift); `stalledCount` is written under the
// thread's lock.
import Logging
import PanesCore
import PanesThreads

extension StoreWorker {
    /// The node's lease has ended: held writes are dropped, and from now on everything is
    /// refused without touching the store, until `rejoin`.
    func becomeRevoked(_ node: NodeID, reason: String) {
        guard revoked == nil else { return }
        revoked = node
        stallReason = reason
        logger.error("the store refused this node's writes: its lease has ended; dropping writes never acknowledged",
                     metadata: ["node": "\(node)", "heldWrites": "\(stalled.count + (unresolved?.writes.count ?? 0))"])
        stalled.removeAll()
        stalledSequence = nil
        // Committed or not, a transaction of unknown outcome is answered to nobody (every
        // connection is closed); what it wrote, if it committed, is read again on rejoining.
        unresolved = nil
        thread.withLock { stalledCount = 0 }
        onRevoked(node)
    }

    /// Fences as the new identity and loads the state for it; false when stopped first.
    func reload(as node: NodeID) -> Bool {
        revoked = nil
        stalled.removeAll()
        stalledSequence = nil
        unresolved = nil
        backoff.succeeded()
        thread.withLock { stalledCount = 0 }
        fencing = node
        shared?.fence(as: node, leaseMs: leaseMs)
        var loadBackoff = backoff
        while true {
            do {
                onRejoined(try store.loadState())
                return true
            } catch {
                logLimits.log(logger, .warning, "loading the state for the new node identity failed",
                              metadata: ["error": "\(error)"], now: Self.nowMs)
            }
            let wait = MonotonicInstant.after(milliseconds: Int(loadBackoff.failed()))
            let (stop, again) = thread.withLock {
                while !thread.stopRequested && rejoinAs == nil && MonotonicInstant.now() < wait { thread.wait(until: wait) }
                return (thread.stopRequested, rejoinAs != nil)
            }
            if stop { return false }
            // A newer identity asked for meanwhile: the loop takes it.
            if again { return true }
        }
    }
}
