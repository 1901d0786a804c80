// Threading: the heartbeat thread's (it makes the calls whose notes these are; `start` before
// that thread exists).
import Logging
import PanesCore
import PanesThreads

extension ClusterNode {
    /// Logs what the last lease calls did, or could not do, to end a lapsed node's lease
    /// (`NodeLeases.takeLeaseEndingNotes`), each kind at most once a minute: a node whose
    /// role may not end the other's connections says so once, and goes on waiting for them.
    func logLeaseEndingNotes() {
        let now = MonotonicInstant.now().milliseconds
        for note in leases.takeLeaseEndingNotes() {
            switch note {
            case .connectionsEnded(let node, let count):
                leaseEndingLogLimits.log(
                    logger, .notice, "ended a lapsed node's connections to PostgreSQL, which held up the end of its lease",
                    metadata: ["lapsedNode": "\(node)", "connections": "\(count)"], now: now)
            case .connectionsNotEnded(let node, let reason):
                // Its sessions wait (connects told `storage_failed`) until TCP gives up on them.
                leaseEndingLogLimits.log(
                    logger, .warning,
                    Logger.Message(stringLiteral: "PostgreSQL refused to end a lapsed node's connections (this node's role "
                        + "may not signal its backends: docs/operating.md); its lease ends once their transactions end"),
                    metadata: ["lapsedNode": "\(node)", "error": "\(reason)"], now: now)
            }
        }
    }
}
