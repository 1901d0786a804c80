/// Which other nodes are alive, as far as this node knows (`ClusterState.peers`). What a node
/// tells the others again whenever they ask (`NodeSignal.isRetoldWhenAsked`: a user's live
/// scenes, its people in a document) is built only while there is one: in a failover storm the
/// surviving node, alone, built a list of up to 100 scenes per user every
/// `sceneShareIntervalMs` for nobody (41 % of its service loop), which its store then dropped.
/// What changed meanwhile is held back (`scenesToShare`, `peopleToShare`) and told once a peer
/// is known.
///
/// Why no node is missed: a node, once registered, subscribes its listener and then asks every
/// node (`scenesWanted`). This node hears that question, unless its own listener was down then;
/// in that case its listener, back, reads the nodes alive once subscribed (`nodesAlive`, before
/// `resubscribed`), and the joining node is among them. Either way the joining node is known
/// before this node has anything to tell it, and is told the lists as they are then. A node
/// known otherwise (the heartbeat's read: a hub built after a rejoin never saw the questions
/// asked meanwhile) is told every list at once. A node stops counting only once its lease is
/// seen ended (`nodesExpired`): a read older than a node's question may come after it.
extension Hub {
    /// The store's read of the nodes alive (this one among them): those not known before are
    /// told every list (and its scenes' presence) now, since they may have asked while no hub here listened.
    /// The leases running are taken from it unless a read begun later was applied already (the
    /// listener's read and the heartbeat's may arrive out of order: an older read kept would
    /// take a node registered since for lapsed). Its nodes still count as peers: each was alive
    /// when read.
    mutating func nodesAlive(_ nodes: [NodeID], readBegan: Millis) {
        if cluster.leasesReadBegan.map({ readBegan >= $0 }) ?? true {
            cluster.leasesRunning = Set(nodes)
            cluster.leasesReadBegan = readBegan
        }
        for other in nodes.sorted() {
            guard let toldAll = addPeer(other, again: true) else { continue }
            answerScenesWanted(by: other, toldAll: toldAll)
            sharePeople(to: other)
            retellPresence(to: other, answering: false)
        }
    }

    /// A signal from `other`: it is alive.
    /// - Parameter asking: the signal is its question (`scenesWanted`), answered after this.
    /// - Returns: the users told to every node now (held back while no node was known), which
    ///   the answer leaves out.
    mutating func heard(from other: NodeID, asking: Bool) -> Set<OwnerKey> {
        addPeer(other, again: asking) ?? []
    }

    /// Whether a list told to every node is built now: only while another node is known alive.
    var hasPeers: Bool { !cluster.peers.isEmpty }

    /// - Parameter again: what was held back is told even if it is what was last told (the
    ///   node forgot it, or never heard it).
    /// - Returns: nil when `other` was known to be alive already (or is gone, or is this
    ///   node); else the users whose scenes were told to every node now.
    private mutating func addPeer(_ other: NodeID, again: Bool) -> Set<OwnerKey>? {
        guard other != node, !cluster.expired.contains(other), cluster.peers.insert(other).inserted else { return nil }
        // The first one after none: what changed meanwhile goes to all.
        guard cluster.peers.count == 1 else { return [] }
        sharePeopleHeldBack()
        return shareScenesNow(again: again)
    }
}
