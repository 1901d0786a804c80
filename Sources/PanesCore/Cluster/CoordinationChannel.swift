/// The channels only a cluster orders (`Channel.coordination`): a session's lease, a drag's
/// ending, a session's record. A single node orders these itself and never commits on them
/// (its coordination is `SingleNodeCoordination`); a single node's store answers any of them
/// with version 0.
public enum CoordinationChannel: Hashable, Sendable, CustomStringConvertible {
    /// A session's lease: its version is the fencing epoch, advanced by `claimSession` alone. A
    /// node writes a session it holds in a commit on this channel at its epoch, so once another
    /// node has taken the session over, the old holder's writes conflict: the database refuses
    /// them.
    case session(SessionID)
    /// A drag's ending: 0 while nobody has dropped or cancelled it, 1 once someone has
    /// (`endDrag`). Of the commits at base 0, exactly one wins: a drag dropped through two
    /// nodes in the same instant is delivered once. A drop onto a window on another node
    /// then moves it to 2 (`settleDrop`): of the receiving node's delivery, the dropping
    /// node's taking the items back and the drag's node's giving them back to the source
    /// (`recoverDrop`), the one commit at base 1 that wins. Every other ending goes to 2 in the
    /// commit at base 0 that makes it, settled by the node that delivers it.
    case drag(Identifier)
    /// A session's record: its version is the stored `revision` (-1 when there is no such
    /// session). A node writing a session that is live nowhere (a refresh) commits on it at the
    /// revision it holds, so a write it has not read yet makes it read and try again on top,
    /// instead of one of the two being dropped.
    case sessionRecord(SessionID)

    public var description: String {
        switch self {
        case .session(let id): "session:\(id)"
        case .drag(let id): "drag:\(id)"
        case .sessionRecord(let id): "record:\(id)"
        }
    }
}
