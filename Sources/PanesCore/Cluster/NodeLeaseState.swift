/// Another node's lease as this node sees it (`Hub.leaseState(of:)`), from the store's reads.
enum NodeLeaseState: String, Sendable {
    /// In the store's last read of the nodes alive (or no read has come yet).
    case running
    /// Run out as the database counts it (missing from its last read of the nodes alive) but not
    /// seen ended: ending it waits for a transaction of that node under way (its row is locked).
    /// That node serves nothing any more: it stops serving before its lease can run out there.
    case lapsed
    /// Ended (`ClusterState.expired`): its sessions can be taken over.
    case ended
}
