/// The coordination of a hub alone on its store (`node == nil`): every point is trivial. It
/// waits for nothing (nobody else issues tickets or makes sessions), finds nothing elsewhere
/// (there is no elsewhere), orders nothing in the store (this hub is its only writer, so its
/// own order is the store's), adds no commands and tells nobody. It never touches
/// `Hub.cluster`, and never emits a `CoordinationChannel` or `CoordinationCommand`
/// (`SingleNodeCoordinationTests`).
struct SingleNodeCoordination: Coordination {
    var sharesStore: Bool { false }

    func connectWaitsForTicket(_ hub: inout Hub, _ id: String, allowed: Bool, connection: ConnectionID,
                               requestID: RequestID, request: ConnectRequest) -> Bool { false }
    func connectWaitsForRecords(_ hub: inout Hub, of session: SessionID?, allowed: Bool, connection: ConnectionID,
                                requestID: RequestID, request: ConnectRequest) -> Bool { false }
    func ticketUsed(_ hub: inout Hub, _ id: String) {}
    func connectWaitsForHolder(_ hub: inout Hub, _ pending: PendingConnect, of target: SessionID) -> Bool { false }
    func claimsBeforeAttach(_ hub: inout Hub, _ target: SessionID, for pending: PendingConnect) -> Bool { false }
    func newSessionClaims(_ hub: inout Hub, _ session: SessionID) -> [StoreCommand] { [] }
    func holderAsked(_ hub: inout Hub, _ session: SessionID) {}
    func settleLateClaim(_ hub: inout Hub, _ pending: PendingCommit, committed: Bool) -> Bool { false }
    func connectsWaiting(_ hub: Hub) -> [ReplyRef] { [] }
    func answerRemoteProbes(_ hub: inout Hub, of session: SessionID) {}
    func expireRemoteProbe(_ hub: inout Hub, of session: SessionID, now: Millis) {}

    func release(_ hub: inout Hub, _ session: SessionID) {}
    func sessionDiscarded(_ hub: inout Hub, _ session: SessionID) {}

    func heldElsewhere(_ hub: Hub, _ session: SessionID) -> Bool { false }
    func claimInFlight(_ hub: Hub, _ session: SessionID) -> Bool { false }
    func keptActiveElsewhere(_ hub: Hub, _ session: SessionID) -> Bool { false }
    func holderElsewhere(_ hub: Hub, _ session: SessionID) -> NodeID? { nil }
    func sceneElsewhere(_ hub: Hub, of session: SceneSession) -> RemoteScene? { nil }
    func appStateElsewhere(_ hub: Hub, of owner: OwnerKey) -> ActivationState? { nil }
    func receiverElsewhere(_ hub: Hub, of target: DropTarget, named: SceneID?, dropper: Dropper) -> RemoteReceiver? { nil }
    func presenceElsewhere(_ hub: Hub, in document: DocumentID) -> [JSONValue] { [] }

    func shareTicket(_ hub: inout Hub, _ ticket: Ticket) {}
    func sharePresence(_ hub: inout Hub, _ presence: JSONValue) {}
    func sharePeople(_ hub: inout Hub, of id: DocumentID) {}
    func shareDrag(_ hub: inout Hub, _ drag: DragState.Drag) {}
    func shareDragEnded(_ hub: inout Hub, _ dragID: String, _ event: ServerEvent) {}
    func shareScenes(_ hub: inout Hub, of owner: OwnerKey) {}
    func documentRemoved(_ hub: inout Hub, _ id: DocumentID) {}
    func counted(_ hub: inout Hub, _ commands: [StoreCommand]) -> [StoreCommand] { commands }
    func sessionsWritten(_ hub: inout Hub, _ commands: [StoreCommand]) {}
    func sessionWritten(_ hub: inout Hub, _ id: SessionID) {}

    func dragEndsInStore(_ hub: inout Hub, _ drag: DragState.Drag, _ ending: DragEnding) -> Bool { false }
    func dragExpiresInStore(_ hub: inout Hub, _ drag: DragState.Drag) -> Bool { false }
    func refreshCommitsInStore(_ hub: inout Hub, _ session: SceneSession, _ request: RefreshRequest,
                               context: RequestContext, attempt: Int) -> Bool { false }
    func openWaitsForOtherNodes(_ hub: inout Hub, _ id: DocumentID, revision: Int64?, pending: [String], link: String?,
                                requestID: RequestID, scene: Scene) -> Bool { false }

    /// The hub holds every record of its own: a stored record of the key is a forgotten one,
    /// replaced (`StoreCommand.recordRequest`).
    func recordCommand(_ hub: inout Hub, _ record: RequestRecord, reporting commands: [StoreCommand]?) -> StoreCommand {
        .recordRequest(record)
    }
    func reserveKey(_ hub: inout Hub, _ slot: RequestKeySlot, fingerprint: String) {}
    func releaseKey(_ hub: inout Hub, _ slot: RequestKeySlot) {}

    func preferenceReadFailed(_ hub: inout Hub, _ domain: PreferenceDomain) {}
    /// Nobody else writes to the store: there is no notice to follow.
    func notice(_ hub: inout Hub, _ notice: ChangeNotice) {}

    func due(_ hub: inout Hub, now: Millis) {}
    func shareScenesTick(_ hub: inout Hub, now: Millis) {}
    func nextDeadline(_ hub: Hub) -> Millis? { nil }
}
