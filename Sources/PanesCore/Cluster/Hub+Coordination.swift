/// The named points the single-node code calls, each handed to the hub's coordination
/// (`Coordination`: what each point means, and which do nothing alone). The hub chose its
/// coordination once, at init, from its `node`; nothing here or in the single-node code asks
/// again.
extension Hub {
    /// Runs `point` on the coordination with the hub `inout`. The coordination is read into a
    /// local first, so the read and the hub's `inout` access do not overlap; the point is one
    /// indirect call through the protocol's witness table.
    @inline(__always)
    mutating func coordinated<Result>(_ point: (any Coordination, inout Hub) -> Result) -> Result {
        let c = coordination
        return point(c, &self)
    }

    var sharesStore: Bool { coordination.sharesStore }

    // MARK: Connects

    mutating func connectWaitsForTicket(_ id: String, allowed: Bool, connection: ConnectionID, requestID: RequestID,
                                        request: ConnectRequest) -> Bool {
        coordinated {
            $0.connectWaitsForTicket(&$1, id, allowed: allowed, connection: connection, requestID: requestID,
                                     request: request)
        }
    }

    mutating func connectWaitsForRecords(of session: SessionID?, allowed: Bool, connection: ConnectionID,
                                         requestID: RequestID, request: ConnectRequest) -> Bool {
        coordinated {
            $0.connectWaitsForRecords(&$1, of: session, allowed: allowed, connection: connection, requestID: requestID,
                                      request: request)
        }
    }

    mutating func ticketUsed(_ id: String) {
        coordinated { $0.ticketUsed(&$1, id) }
    }

    mutating func connectWaitsForHolder(_ pending: PendingConnect, of target: SessionID) -> Bool {
        coordinated { $0.connectWaitsForHolder(&$1, pending, of: target) }
    }

    mutating func claimsBeforeAttach(_ target: SessionID, for pending: PendingConnect) -> Bool {
        coordinated { $0.claimsBeforeAttach(&$1, target, for: pending) }
    }

    mutating func newSessionClaims(_ session: SessionID) -> [StoreCommand] {
        coordinated { $0.newSessionClaims(&$1, session) }
    }

    mutating func holderAsked(_ session: SessionID) {
        coordinated { $0.holderAsked(&$1, session) }
    }

    mutating func settleLateClaim(_ pending: PendingCommit, committed: Bool) -> Bool {
        coordinated { $0.settleLateClaim(&$1, pending, committed: committed) }
    }

    func connectsWaitingElsewhere() -> [ReplyRef] { coordination.connectsWaiting(self) }

    mutating func answerRemoteProbes(of session: SessionID) {
        coordinated { $0.answerRemoteProbes(&$1, of: session) }
    }

    mutating func expireRemoteProbe(of session: SessionID, now: Millis) {
        coordinated { $0.expireRemoteProbe(&$1, of: session, now: now) }
    }

    // MARK: Scenes ended

    mutating func release(_ session: SessionID) {
        coordinated { $0.release(&$1, session) }
    }

    mutating func sessionDiscarded(_ session: SessionID) {
        coordinated { $0.sessionDiscarded(&$1, session) }
    }

    // MARK: Where a session or scene is live

    func heldElsewhere(_ session: SessionID) -> Bool { coordination.heldElsewhere(self, session) }
    func claimInFlight(_ session: SessionID) -> Bool { coordination.claimInFlight(self, session) }
    func keptActiveElsewhere(_ session: SessionID) -> Bool { coordination.keptActiveElsewhere(self, session) }
    func holderElsewhere(_ session: SessionID) -> NodeID? { coordination.holderElsewhere(self, session) }
    func sceneElsewhere(of session: SceneSession) -> RemoteScene? { coordination.sceneElsewhere(self, of: session) }
    func appStateElsewhere(of owner: OwnerKey) -> ActivationState? { coordination.appStateElsewhere(self, of: owner) }

    func receiverElsewhere(of target: DropTarget, named: SceneID?, dropper: Dropper) -> RemoteReceiver? {
        coordination.receiverElsewhere(self, of: target, named: named, dropper: dropper)
    }

    func presenceElsewhere(in document: DocumentID) -> [JSONValue] {
        coordination.presenceElsewhere(self, in: document)
    }

    // MARK: Changes other nodes must hear of

    mutating func shareTicket(_ ticket: Ticket) {
        coordinated { $0.shareTicket(&$1, ticket) }
    }

    mutating func sharePresence(_ presence: JSONValue) {
        coordinated { $0.sharePresence(&$1, presence) }
    }

    mutating func sharePeople(of id: DocumentID) {
        coordinated { $0.sharePeople(&$1, of: id) }
    }

    mutating func shareDrag(_ drag: DragState.Drag) {
        coordinated { $0.shareDrag(&$1, drag) }
    }

    mutating func shareDragEnded(_ dragID: String, _ event: ServerEvent) {
        coordinated { $0.shareDragEnded(&$1, dragID, event) }
    }

    mutating func shareScenes(of owner: OwnerKey) {
        coordinated { $0.shareScenes(&$1, of: owner) }
    }

    mutating func documentRemoved(_ id: DocumentID) {
        coordinated { $0.documentRemoved(&$1, id) }
    }

    mutating func counted(_ commands: [StoreCommand]) -> [StoreCommand] {
        coordinated { $0.counted(&$1, commands) }
    }

    mutating func sessionsWritten(_ commands: [StoreCommand]) {
        coordinated { $0.sessionsWritten(&$1, commands) }
    }

    mutating func sessionWritten(_ id: SessionID) {
        coordinated { $0.sessionWritten(&$1, id) }
    }

    // MARK: Changes ordered in the store

    mutating func dragEndsInStore(_ drag: DragState.Drag, _ ending: DragEnding) -> Bool {
        coordinated { $0.dragEndsInStore(&$1, drag, ending) }
    }

    mutating func dragExpiresInStore(_ drag: DragState.Drag) -> Bool {
        coordinated { $0.dragExpiresInStore(&$1, drag) }
    }

    mutating func refreshCommitsInStore(_ session: SceneSession, _ request: RefreshRequest, context: RequestContext,
                                        attempt: Int) -> Bool {
        coordinated { $0.refreshCommitsInStore(&$1, session, request, context: context, attempt: attempt) }
    }

    mutating func openWaitsForOtherNodes(_ id: DocumentID, revision: Int64?, pending: [String], link: String?,
                                         requestID: RequestID, scene: Scene) -> Bool {
        coordinated {
            $0.openWaitsForOtherNodes(&$1, id, revision: revision, pending: pending, link: link, requestID: requestID,
                                      scene: scene)
        }
    }

    // MARK: Keyed requests

    mutating func recordCommand(_ record: RequestRecord, reporting commands: [StoreCommand]?) -> StoreCommand {
        coordinated { $0.recordCommand(&$1, record, reporting: commands) }
    }

    mutating func reserveKey(_ slot: RequestKeySlot, fingerprint: String) {
        coordinated { $0.reserveKey(&$1, slot, fingerprint: fingerprint) }
    }

    mutating func releaseKey(_ slot: RequestKeySlot) {
        coordinated { $0.releaseKey(&$1, slot) }
    }

    // MARK: Reads of what others wrote

    mutating func preferenceReadFailed(_ domain: PreferenceDomain) {
        coordinated { $0.preferenceReadFailed(&$1, domain) }
    }

    mutating func notice(_ notice: ChangeNotice) {
        coordinated { $0.notice(&$1, notice) }
    }

    // MARK: Time

    mutating func coordinationDue(now: Millis) {
        coordinated { $0.due(&$1, now: now) }
    }

    mutating func shareScenesTick(now: Millis) {
        coordinated { $0.shareScenesTick(&$1, now: now) }
    }

    var coordinationDeadline: Millis? { coordination.nextDeadline(self) }
}
