// Threading: the service thread's, like the rest of the runtime (ServerRuntime.swift); the
// store thread, the heartbeat and the listener reach these methods through
// `WebSocketServer.post`.
import Logging
import PanesCore
import PanesTransport

/// What comes from the store thread and the other nodes: loads, notices, conflicts resolved
/// under a document's lock, and a lease that ended (the node rejoins under a new identity).
extension ServerRuntime {
    /// A document commit conflicted and the store thread, holding the document's lock, read
    /// what the other nodes committed: the hub applies it (as it would any `behind` outcome)
    /// and its retry is handed back to the store thread. Runs on the service thread.
    func resolve(_ commit: Commit, _ operations: [StoredOperation], _ resolution: ConflictResolution) {
        guard rejoining == nil else {
            _ = resolution.answer(nil)
            return
        }
        let start = RuntimeMetrics.now
        let resolved = hub.resolveConflict(commit, behind: operations)
        // The retry goes into the store thread's open transaction, where nothing can come
        // before it; it is handed over first, because the lock is held until then and the
        // rest of this turn (sending the other nodes' operations to this node's scenes) is
        // most of its work. Replies to the retry come in a later turn, after those sends.
        let retry = resolved.retry
        if !resolution.answer(retry), let retry {
            // The store thread gave up waiting (`conflictRetryWaitMs`): the ordinary way, then.
            worker.submit(.commit(retry), sequence: nil)
        }
        perform(resolved.effects)
        metrics.turn(since: start)
    }

    /// Another node wrote, or leases moved; runs on the service thread (posted by the listener
    /// or the heartbeat thread).
    func noticed(_ notice: ChangeNotice) {
        if case .nodesExpired(let nodes) = notice { gone = nodes }
        if case .nodesAlive(let nodes, let readBegan) = notice, readBegan >= alive.readBegan { alive = (nodes, readBegan) }
        if notice == .leaseLost { refuseWhileLeaseLost() }
        // The hub built after the rejoin reads everything from its own start (`reloaded`).
        guard rejoining == nil else { return }
        let start = RuntimeMetrics.now
        perform(hub.handle(.notice(notice)))
        metrics.turn(since: start)
    }

    /// A read the hub asked for is done; runs on the service thread (posted by the store thread).
    func didLoad(_ result: LoadResult) {
        guard rejoining == nil else { return }
        perform(hub.handle(.loaded(result)))
    }

    /// The node's identity `node` may no longer serve: its lease has ended, and other nodes may
    /// take its sessions over at any moment (the store refuses its writes from now on). Every
    /// connection is closed with 4011 at once, so their windows reconnect and resume wherever
    /// they land; what waited for durability is never sent (its writes will not commit, or
    /// committed before the end and are found on resuming); the node stops taking connections
    /// and comes back under a new identity (`membership`, then `reloaded`).
    func revoked(_ node: NodeID) {
        guard rejoining == nil, hub.node == node else { return }
        rejoining = node
        logger.critical("this node's lease has ended; closing every connection and rejoining as a new node",
                        metadata: ["node": "\(node)", "connections": "\(transport.connectionCount)"])
        refusal = .rejoining
        gate.dropAll()
        pausedConnections.removeAll()
        let closing = hub.closeEveryConnection(.nodeLost, reason: "this node's lease has ended; reconnect")
        for case .close(let connection, _, _) in closing { retired.insert(connection.rawValue) }
        perform(closing)
        cluster?.rejoin(from: node)
    }

    func membership(_ change: ClusterNode.Membership) {
        switch change {
        case .revoked(let node):
            revoked(node)
        case .joined(let fresh, let gone):
            // The heartbeat found the lease ended and registered anew before the store thread
            // told: the old identity ends here now.
            if rejoining == nil, let old = hub.node, old != fresh { revoked(old) }
            guard rejoining != nil else { return }
            self.gone = gone
            registered = fresh
            worker.rejoin(as: fresh)
        case .leaseRegained:
            // Only if it still holds: a loss told after this regain was posted stays in force.
            // Rejoining, the hub built for the new identity is told what holds then (`reloaded`).
            guard rejoining == nil, cluster?.isHealthy == true else { return }
            if refusal == .leaseLost { refusal = nil }
            perform(hub.handle(.notice(.leaseRegained)))
        case .liveNodes(let count):
            apiGate.setNodes(count)
            logger.info("live nodes counted; each admits its share of the API's rates", metadata: ["nodes": "\(count)"])
        }
    }

    /// The lease is lost by the node's own clock (the hub closes every connection with 4011,
    /// and attaches nothing until told `leaseRegained`): new WebSocket upgrades are refused
    /// (503) until a renewal holds it again, since a window attached now could stay live here
    /// after another node took its session over. A drain's or a rejoin's refusal stands (the
    /// rejoin's ends in `reloaded`, which looks again); so does a lease held again already
    /// (the heartbeat renewed before this notice came).
    func refuseWhileLeaseLost() {
        guard refusal == nil, cluster?.isHealthy == false else { return }
        refusal = .leaseLost
    }

    /// The state reloaded for the new identity: a hub built on it serves from now on. It reads
    /// what other nodes wrote since (`resubscribed`) and knows who is gone. If the new
    /// identity's lease is not held now (its registration came back late, or no renewal
    /// followed it in time while the state was read), the loss told meanwhile reached no hub:
    /// the new one is told it, and upgrades stay refused until a renewal holds the lease.
    func reloaded(_ state: StoredState) {
        guard rejoining != nil, let fresh = registered else { return }
        rejoining = nil
        registered = nil
        hub = makeHub(state, fresh)
        perform(hub.start())
        perform(hub.handle(.notice(.nodesExpired(gone))))
        perform(hub.handle(.notice(.nodesAlive(alive.nodes, readBegan: alive.readBegan))))
        perform(hub.handle(.notice(.resubscribed)))
        let lost = cluster?.isHealthy == false
        if lost { perform(hub.handle(.notice(.leaseLost))) }
        if drainDeadline == nil { refusal = lost ? .leaseLost : nil }
        logger.notice("serving again as a new node", metadata: ["node": "\(fresh)", "sessions": "\(state.sessions.count)"])
    }
}
