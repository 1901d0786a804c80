// Threading: the heartbeat thread's (it makes the calls whose notes these are; `start` before
// that thread exists).
import Logging
import PanesCore
import PanesThreads

extension ClusterNode {
    /// Logs what the last lease calls did, or could not do, to end a lapsed node's lease
    /// (`NodeLeases.takeLeaseEndingNotes`).
    ///
    /// Ending a node's connections happens about once per lapsed identity, so each time is
    /// logged, naming the node. A refusal or a failure repeats at every check while it lasts:
    /// each is logged at most once a minute per node (a kind of its own per node, so a second
    /// node's is never hidden behind the first's), and the check goes on waiting.
    func logLeaseEndingNotes() {
        let now = MonotonicInstant.now().milliseconds
        for note in leases.takeLeaseEndingNotes() {
            switch note {
            case .connectionsEnded(let node, let count):
                logger.notice("ended a lapsed node's connections to PostgreSQL, which held up the end of its lease",
                              metadata: ["lapsedNode": "\(node)", "connections": "\(count)"])
            case .connectionsNotEnded(let node, let reason):
                // Its sessions wait (connects told `storage_failed`) until TCP gives up on them.
                let message = Logger.Message(stringLiteral: "PostgreSQL refused to end a lapsed node's connections (this "
                    + "node's role may not signal its backends: docs/operating.md); its lease ends once their transactions end")
                leaseEndingLogLimits.log(logger, .warning, message, metadata: ["lapsedNode": "\(node)", "error": "\(reason)"],
                                         kind: "\(message) \(node.rawValue)", now: now)
            case .connectionsEndingFailed(let node, let error):
                let message: Logger.Message = "could not end a lapsed node's connections to PostgreSQL; its lease ends once their transactions end"
                leaseEndingLogLimits.log(logger, .error, message, metadata: ["lapsedNode": "\(node)", "error": "\(error)"],
                                         kind: "\(message) \(node.rawValue)", now: now)
            }
        }
    }
}
