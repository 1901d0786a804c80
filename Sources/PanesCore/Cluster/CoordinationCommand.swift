/// The store commands only a cluster's coordination emits (`StoreCommand.coordination`):
/// leases, drag endings and settled remote drops, and request keys checked against other nodes' attempts. A hub with
/// `SingleNodeCoordination` never emits them (`SingleNodeCoordinationTests`); a single node's
/// store (SQLite) ignores them, having nobody to fence or to race; the shared stores
/// (PostgreSQL, `MemoryStore` as two nodes' store in tests) apply them.
public enum CoordinationCommand: Sendable, Equatable {
    /// Records who holds the session live (nil: released) and advances its lease epoch to
    /// `claim.epoch`. Used in a commit on `.session(id)` whose base is the epoch being replaced,
    /// or with the session's first write (a session made here, claimed as it is stored).
    case claimSession(SessionID, SessionClaim)
    /// Records that the drag ended (dropped or cancelled), which moves its `.drag` channel to 1,
    /// and forgets the endings of drags that expired `DragEnd.keptMs` before this one expires.
    /// Used in a commit on `.drag(id)` at base 0.
    case endDrag(String, expiresAt: Millis)
    /// Records that a drop onto a window live on another node was settled, which moves the
    /// drag's `.drag` channel from 1 to 2: delivered by the receiving node, or its items given
    /// back to the dropper by the dropping node (`Hub+RemoteDrops.swift`). Used in a commit on
    /// `.drag(id)` at base 1: of the two, exactly one wins, so the items go to one window.
    case settleDrop(String)
    /// `StoreCommand.recordRequest` for a node of a cluster, which other nodes' attempts of the
    /// same request may race: a key is recorded once. Written over the node's own reservation
    /// of the key (`SharedStore.reserveRequestKeys`), if it made one. A persist carrying it is
    /// left out whole when the key is recorded already, or reserved by another node (an older
    /// attempt held on a node cut off from the database, which lost to a retry through another),
    /// and either way the outcome is reported under `report`: `.committed`, or `.recorded` with
    /// the records found, so the node can undo what it applied in memory. In a commit (no
    /// `report`) the commit is refused instead: `CommitOutcome.recorded` (or `.failed` for
    /// another node's reservation).
    case recordKeyedRequest(RequestRecord, node: NodeID, report: CommitID?)
    /// The record of a request whose key `holder` reserved (`SharedStore.reserveRequestKeys`),
    /// in a commit that settles a drop onto a window on another node (`Hub+RemoteDrops.swift`):
    /// that node's settling, written for the dropping node (`holder`), and the dropping node's
    /// own take-back. Written only over that reservation, still unresolved and still
    /// `holder`'s, in the same transaction: the commit is refused (`CommitOutcome.failed`) when
    /// the reservation is gone (released after the holder answered `outcome_unknown`, or never
    /// made) or another node holds it (a retry took it over), and `.recorded` when the key is
    /// recorded already. So a settling that comes after the holder gave the request up, when a
    /// retry may have been refused, applies nothing.
    case recordHeldRequest(RequestRecord, holder: NodeID)
    /// Holds a drop's `itemsDropped` for a window's session (`HeldDrop`), in the commit that
    /// settles the drop for that window (the window's node's settling, or the ending of a drag
    /// dropped onto another window of the dropping node), until its node has sent it
    /// (`releaseDrop`): if that node dies first, the node that takes the session over sends it.
    /// Forgets held drops whose keeping ended before `forgetBefore` (now). A held drop already
    /// there for the session and drag is left as it is.
    case holdDrop(HeldDrop, forgetBefore: Millis)
    /// Forgets a held drop: its `itemsDropped` was sent to the window (or the window was gone).
    case releaseDrop(HeldDrop.Key)
    /// Forgets held drops whose keeping ended before `before` (now), whoever held them: each
    /// node sends it every `heldDropPruneIntervalMs`, so rows nobody read do not wait for the
    /// next drop held.
    case pruneHeldDrops(before: Millis)
    /// Gives up this node's reservation of a key (its request failed, applying nothing), so a
    /// retry through any node can go ahead.
    case releaseRequestKey(RequestKeySlot, node: NodeID)
}

extension StoreCommand {
    /// The persist's report of a keyed write (`CoordinationCommand.recordKeyedRequest`), if the
    /// command is one.
    public var keyedReport: CommitID? {
        if case .coordination(.recordKeyedRequest(_, _, let report?)) = self { report } else { nil }
    }
}
