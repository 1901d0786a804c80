/// What a shared store's `apply` did (`SharedStore.apply(_:resolvingConflicts:)`): each
/// commit's and keyed persist's outcome, and the sessions whose claims in it found drops held.
/// Returned by the call that applied them, so what the claims found reaches that call's caller
/// and no other, and nothing of it waits in the store for a later call to take (or lose).
public struct AppliedWrites: Sendable, Equatable {
    public var outcomes: [CommitID: CommitOutcome]
    /// The sessions for which a claim naming a node (`CoordinationCommand.claimSession`) found
    /// drops held (`CoordinationCommand.holdDrop`; any row, kept or not), in the order claimed.
    /// Found by the claim's own write (PostgreSQL: its statement), so a node that attaches a
    /// session another node held or let go learns of drops held for it with no read of its own
    /// (`HubEvent.heldDropsFound`). An `apply` that throws returns none (for a
    /// `CommitOutcomeUnknown`, its `heldDropsFound` holds them).
    public var heldDropsFound: [SessionID]

    public init(outcomes: [CommitID: CommitOutcome] = [:], heldDropsFound: [SessionID] = []) {
        self.outcomes = outcomes
        self.heldDropsFound = heldDropsFound
    }
}
