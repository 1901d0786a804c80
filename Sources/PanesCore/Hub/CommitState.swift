/// Writes to ordered channels in flight: at most one commit per channel at a time, and the
/// requests that arrived meanwhile queued behind it, to go together as the next commit (group
/// commit per channel). A channel catching up after a conflict takes no new commit until the
/// catch-up has been applied.
struct CommitState: Sendable {
    var nextID: UInt64 = 0
    var pending: [CommitID: PendingCommit] = [:]
    /// Each channel's writer (`ChannelWriters`), per feature (`WrittenChannel`).
    var preferenceWriters = ChannelWriters<PreferenceDomain, PreferenceWrite>()
    var documentWriters = ChannelWriters<DocumentID, DocumentEdit>()
    /// Requests answered `outcome_unknown` whose commit's real outcome has not come yet: the
    /// reply it brings is not sent again (`Hub.send`), though a keyed one still records it.
    var answered: Set<ReplyRef> = []
    /// Commits answered `outcome_unknown` (`Hub.commitOutcomeUnknown`), until their outcome comes.
    var unresolved: Set<CommitID> = []
    /// Replies being sent `outcome_unknown` because their commit's outcome comes later (not
    /// because of an attempt elsewhere): a keyed one stays in flight until then.
    var outcomeLater: Set<ReplyRef> = []
    /// While the hub resolves a conflict under the store's lock (`Hub.resolveConflict`): the
    /// channel, and the first commit made on it then (the retry), kept out of the effects.
    var resolving: (channel: Channel, retry: Commit?)?
    /// Scenes a drain told to close (they take no more requests) still owed the answer to a
    /// write of theirs under way: closed once it is out (`Hub.closeAnswered`).
    var closingAfterAnswers: Set<ConnectionID> = []

    mutating func makeID() -> CommitID {
        nextID += 1
        return CommitID(nextID)
    }
}

/// What a commit in flight will do once its outcome is known.
enum PendingCommit: Sendable {
    case preferences(PreferenceDomain, [PreferenceWrite], [PreferenceOutcome])
    case document(DocumentID, DocumentBatch)
    /// A session's lease: the connect waiting to attach to it when the claim is won, nil for a
    /// claim nobody waits on (a new session's) or a release.
    case claim(SessionID, SessionClaim, PendingConnect?)
    /// A drop or cancel waiting to learn whether it ended the drag (`Hub+ClusterDrags.swift`).
    case dragEnd(DragState.Drag, DragEnding)
    /// A drag's expiry on the node it began on, ordered like a drop (`Hub+ClusterDrags.swift`).
    case dragExpiry(DragState.Drag)
    /// A drop onto a window on another node, its items taken back for the dropper; and one
    /// another node offered to a window here, about to be delivered (`Hub+RemoteDrops.swift`).
    case dropReturn(RemoteDrop)
    case dropSettle(String)
    /// A drop that another node took and settled nowhere, settled as returned to the drag's
    /// source by the node the drag began on (`Hub.recoverDrop`).
    case dropRecovery(DragState.Drag)
    /// A refresh of a session live nowhere, written at the record revision it was made on.
    case refresh(SceneSession, RefreshRetry)
    /// A persist carrying a keyed request's record (`recordKeyedRequest`), its commands kept to
    /// undo them should the store leave it out.
    case keyedWrite(RequestKeySlot, [StoreCommand])
}
