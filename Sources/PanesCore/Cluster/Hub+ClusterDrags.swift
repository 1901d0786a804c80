import Logging

/// Drags across nodes: a drag is shared with every node when it begins, so a window on any
/// node can drop it; how it ended goes back to the node it began on, which tells its source.
///
/// A drop (or the source's cancel) is a compare-and-set on the drag's channel in the shared
/// store (`CoordinationChannel.drag`, base 0): of two drops through two nodes in the same
/// instant, the store lets exactly one end the drag, and the other gets the error a single node
/// gives for a second drop. The `dragEnded` signal is only there so nodes answer later drops at once.
///
/// Every ending but a drop onto a window on another node is settled in the same commit
/// (`settleDrop`, to 2): its node delivers it. A drop onto a window on another node stays at 1
/// until that node or the dropping node settles where its items went (`Hub+RemoteDrops.swift`);
/// if both die first (or the dropping node before it offered the drop), nobody would: so the node
/// the drag began on, whose expiry (or own drop or cancel) found the drag ended and heard nothing
/// of how, settles it at base 1 itself, `nodeLeaseMs` + `dropRecoveryMs` later, as returned to the source (`recoverDrop`).
extension Hub {
    /// Asks the store to end the drag for this drop or cancel; answered in `dragEndCommitted`.
    ///
    /// A cancel (answered `{}`) and a drop onto the dropper itself (answered with the drag's
    /// items) have answers known before the commit: the key's record goes in the commit with
    /// the drag's ending (as a preference write's does), so a retry through another node gets
    /// that answer even if this node dies before it leaves. A drop onto another window or the
    /// new-window zone is answered only once delivered (the window may have closed meanwhile,
    /// the new windows are made then), and recorded in a persist after the commit
    /// (`replyLeaving`), or, for a window on another node, in the commit that settles where its
    /// items went (`Hub+RemoteDrops.swift`): PROTOCOL.md (drop) says what its retry gets if
    /// this node dies between.
    mutating func endInStore(_ drag: DragState.Drag, _ ending: DragEnding) {
        var commands: [StoreCommand] = [.coordination(.endDrag(drag.id, expiresAt: drag.expiresAt))]
        // Delivered by this node: settled now, so the drag's node never takes it for unsettled.
        if ending.remote == nil { commands.append(.coordination(.settleDrop(drag.id))) }
        let known: JSONValue?
        switch ending.kind {
        case .cancel: known = [:]
        case .drop(.scene, let operation, let named, let dropper) where dropper.isItself(named):
            known = droppedItems(drag, operation: operation)
        case .drop: known = nil
        }
        if let known, let record = commitRecord(ending.context, result: known) { commands.append(record) }
        var ending = ending
        if ending.remote == nil, case .drop(.scene, let operation, let named?, let dropper) = ending.kind,
           !dropper.isItself(named), let target = scenes[named] {
            // Another window here: its `itemsDropped` is held until sent, so that if this node
            // dies after the commit and before it delivers, the node the window's session
            // resumes on does (`Hub+HeldDrops.swift`).
            commands.append(holdDrop(itemsDroppedFields(drag, operation: operation), of: drag.id, for: target.session))
            ending.held = HeldDrop.Key(session: target.session, drag: Identifier(drag.id))
        }
        commitEnd(of: drag, .dragEnd(drag, ending), commands)
    }

    /// Asks the store to end the drag for its expiry; answered in `expiryCommitted`.
    mutating func expireInStore(_ drag: DragState.Drag) {
        commitEnd(of: drag, .dragExpiry(drag), [.coordination(.endDrag(drag.id, expiresAt: drag.expiresAt)),
                                                .coordination(.settleDrop(drag.id))])
    }

    private mutating func commitEnd(of drag: DragState.Drag, _ pending: PendingCommit, _ commands: [StoreCommand]) {
        let id = commits.makeID()
        commits.pending[id] = pending
        submit(Commit(id: id, channel: .coordination(.drag(Identifier(drag.id))), base: 0, commands: commands))
    }

    /// The store's answer: the drop that ended the drag is delivered now; one that lost is told
    /// the drag was already dropped (or cancelled), as on one node.
    mutating func dragEndCommitted(_ drag: DragState.Drag, _ ending: DragEnding, _ outcome: CommitOutcome) {
        let context = ending.context
        let request = ending.kind.request
        switch outcome {
        case .committed:
            guard case .drop(let target, let operation, let named, let dropper) = ending.kind else {
                // A cancel is in the store whether or not its window is still here: it is
                // answered all the same, with what its key's record in the commit says, and a
                // retry of it from the reloaded window gets this answer, not `drag_already_dropped`.
                endDrag(drag, reason: "cancelled by its source")
                send(.reply(context.id, result: [:]), to: context.connection)
                return
            }
            // The drop is in the store, so it stands whether or not the window that dropped it is
            // still here (it may have closed meanwhile: a reload, a crash). It is delivered as on
            // one node (a drop onto the dropper itself is answered with the items, as its key's
            // record in the commit says), and answered all the same, so its key records the
            // answer (`replyLeaving`, for a drop onto another window or the new-window zone) and
            // a retry of it from the reloaded window gets it: an error here would tell of a drop
            // that was applied. A drop onto a window on another node is that node's to deliver:
            // answered once it says so, or once the items are taken back (`Hub+RemoteDrops.swift`).
            // Where it goes was decided before the commit (`DragEnding.remote`): a drop settled
            // in its commit is not offered, and one left unsettled is not delivered here.
            if let remote = ending.remote {
                offerRemoteDrop(drag, operation: operation, to: remote, from: dropper, context: context)
                return
            }
            let result: JSONValue
            do throws(PanesError) {
                result = try deliver(drag, target: target, operation: operation, onto: named, from: dropper)
            } catch {
                // What it was dropped onto is gone since the drop was checked: the window it names
                // closed, or the user's sessions filled up before its new windows could be made.
                // The drag has ended in the store all the same: the items come back to the
                // dropper, as for a drop onto itself, instead of to nobody.
                logger.notice("a drop's receiver was gone when its ending was stored; its items go to the dropper",
                              metadata: ["drag": "\(drag.id)", "error": "\(error.code.rawValue)"])
                result = deliverToDropper(drag, operation: operation, dropper)
            }
            if let held = ending.held { releaseHeldDrop(held) }
            send(.reply(context.id, result: result), to: context.connection)
        case .unknown:
            // Answered early (`commitOutcomeUnknown`); the real outcome comes later.
            return
        case .recorded(let found):
            // The key this commit records was recorded first: another attempt of this drop or
            // cancel (through another node, once this node's reservation had lapsed) ended the
            // drag. Its record is the answer.
            if let record = found.first(where: { $0.slot == context.key }) {
                drags.setPhase(ending.kind.isCancel ? .cancelled : .dropped, of: drag.id)
                answerFromStore(context, request: request, record)
                return
            }
            fallthrough
        case .conflict, .behind:
            // Another drop (or cancel) ended it first, here or on another node.
            // Which of the two is not known until its `dragEnded` arrives: a drop, most likely.
            var ended = drags[drag.id] ?? drag
            if ended.phase == .pending {
                ended.phase = .dropped
                endedElsewhere(ended)
            }
            // Past its expiry by now: most likely its expiry ended it, as a single node answers.
            let error = drag.expiresAt <= now()
                ? PanesError(.dragNotFound, "no drag \(drag.id) (unknown or expired)", field: "drag")
                : ending.kind.isCancel
                ? PanesError(.dragAlreadyDropped, "drag \(drag.id) already ended", field: "drag")
                : alreadyEnded(ended)
            fail(context.id, request: request, error, to: context.connection)
        case .failed(let reason):
            logLimited(.error, "a drag's ending could not be stored", metadata: ["drag": "\(drag.id)", "reason": "\(reason)"])
            fail(context.id, request: request,
                 PanesError(.storageFailed, "the drop could not be stored; retry", retryAfterMs: 1_000),
                 to: context.connection)
        }
    }

    /// A drag the store would not end for a drop or cancel here: it ended elsewhere, how not
    /// heard yet. One begun here may be a drop through another node that nobody settles (that
    /// node died before its offer, and this is its client's retry, or the source's cancel):
    /// looked at again as after an expiry that found it ended (`recoverDrop`), unless its
    /// `dragEnded` comes first.
    private mutating func endedElsewhere(_ drag: DragState.Drag) {
        guard drag.origin == nil else { return drags.setPhase(.dropped, of: drag.id) }
        drags.awaitSettling(drag.id, recoverAt: max(drag.expiresAt, now()) + recoveryWait)
    }

    /// The expiry of a drag begun here, ordered in the store like a drop: if a drop through
    /// another node ended the drag first, that drop is how it ended (its node tells the source),
    /// and the expiry reports nothing.
    mutating func expiryCommitted(_ drag: DragState.Drag, _ outcome: CommitOutcome) {
        switch outcome {
        case .committed:
            endDrag(drag, reason: "expired")
        case .unknown:
            // Nothing to answer early: the real outcome comes later.
            return
        case .conflict, .behind, .recorded:
            // A drop through another node ended it first. Its `dragEnded` (which may have come
            // already) tells the source; the copy goes once a lease has passed. One not heard of
            // yet may be a drop onto a window on a third node that nobody settles (its node and
            // the dropping node died): looked at again `recoveryWait` from now (`recoverDrop`).
            if drags[drag.id]?.phase == .expiring {
                drags.awaitSettling(drag.id, recoverAt: now() + recoveryWait)
                return
            }
            drags.keep(drag.id, until: now() + Millis(settings.nodeLeaseMs))
            return
        case .failed(let reason):
            // Unknown whether a drop won; the source must not wait for ever.
            logLimited(.error, "a drag's expiry could not be stored", metadata: ["drag": "\(drag.id)", "reason": "\(reason)"])
            endDrag(drag, reason: "expired")
        }
        drags.remove(drag.id)
    }

    // MARK: Drops settled nowhere

    /// How long after a drag's expiry its node waits to settle a drop of it nobody settled: a
    /// live node settles its drops within its key's reservation (`nodeLeaseMs` from the drop,
    /// which came before the expiry), and `dropRecoveryMs` more spares a slow one.
    var recoveryWait: Millis { Millis(settings.nodeLeaseMs) + Millis(settings.dropRecoveryMs) }

    /// A drag begun here that a drop through another node ended, with no word since of where
    /// its items went, `recoveryWait` after its expiry: far past the time the dropping node
    /// and the window's node settle a drop while they live. Settled here at base 1, as the
    /// take-back is: if it wins, nobody delivered the items (a node settles before it
    /// delivers), and they stay with the source; if it conflicts, one of those nodes settled
    /// it and told the source.
    mutating func recoverDrop(_ drag: DragState.Drag) {
        let id = commits.makeID()
        commits.pending[id] = .dropRecovery(drag)
        submit(Commit(id: id, channel: .coordination(.drag(Identifier(drag.id))), base: 1,
                      commands: [.coordination(.settleDrop(drag.id))]))
    }

    mutating func dropRecoveryCommitted(_ drag: DragState.Drag, _ outcome: CommitOutcome) {
        switch outcome {
        case .committed:
            logger.notice("a drop through another node was settled nowhere; its items stay with the drag's source",
                          metadata: ["drag": "\(drag.id)"])
            guard drags[drag.id]?.phase == .unsettled else { break }
            drags.setPhase(.cancelled, of: drag.id)
            tellSource(of: drag, ServerEvent("dragEnded", [
                "drag": .string(drag.id), "outcome": "returned",
                "reason": "dropped through a node that went away before the items reached a window",
            ]))
        case .unknown:
            // The real outcome comes later.
            return
        case .failed(let reason) where now() < drag.expiresAt + DragEnd.keptMs:
            // Tried again while the store still keeps the drag's ending.
            logLimited(.error, "a drop settled nowhere could not be settled; trying again",
                       metadata: ["drag": "\(drag.id)", "reason": "\(reason)"])
            drags.keep(drag.id, until: now() + Millis(settings.dropConfirmTimeoutMs))
            return
        case .conflict, .behind, .recorded, .failed:
            // Settled by the node that took the drop or the window's node (whose `dragEnded`
            // told the source, unless it died after its commit), or forgotten by the store.
            break
        }
        drags.remove(drag.id)
    }

    mutating func signalDrag(_ drag: DragState.Drag) {
        signal(.drag([
            "id": .string(drag.id), "workspace": .string(drag.owner.workspace), "user": .string(drag.owner.user),
            "source": .string(drag.source.rawValue), "sourceSession": .string(drag.sourceSession.rawValue),
            "items": .array(drag.items.map(\.json)), "expiresAt": .int(drag.expiresAt),
        ]), to: nil)
    }

    mutating func takeRemoteDrag(_ json: JSONValue, from origin: NodeID) {
        guard let id = json["id"]?.stringValue, let workspace = json["workspace"]?.stringValue,
              let user = json["user"]?.stringValue, let source = json["source"]?.stringValue,
              let sourceSession = json["sourceSession"]?.stringValue, let expiresAt = json["expiresAt"]?.intValue,
              drags[id] == nil else { return }
        var items: [DragItem] = []
        for (index, item) in (json["items"]?.arrayValue ?? []).enumerated() {
            guard let decoded = try? DragItem(json: item, field: "items[\(index)]", settings: settings) else { return }
            items.append(decoded)
        }
        var drag = DragState.Drag(id: id, owner: OwnerKey(workspace: workspace, user: user), source: SceneID(source),
                                  sourceSession: SessionID(sourceSession), items: items, expiresAt: expiresAt)
        drag.origin = origin
        drags.add(drag)
    }

    /// A drag ended on another node: marked here, and its source told if it is here.
    mutating func remoteDragEnded(_ json: JSONValue) {
        guard let id = json["drag"]?.stringValue, let drag = drags[id] else { return }
        let outcome = json["event"]?["outcome"]?.stringValue
        drags.setPhase(outcome == "dropped" ? .dropped : .cancelled, of: id)
        guard drag.origin == nil, let source = scenes[drag.source], let fields = json["event"]?.objectValue else { return }
        send(.event(ServerEvent("dragEnded", fields)), to: source.connection)
    }
}

/// A drop or cancel asking the store to end a drag, and the request to answer.
struct DragEnding: Sendable {
    enum Kind: Sendable {
        /// Where, how, onto which scene, and by whom (the window that dropped it, which may have
        /// closed by the time the store has ordered the drop).
        case drop(DropTarget, DragOperation, SceneID?, Dropper)
        case cancel

        var request: String {
            switch self {
            case .drop: DropRequest.type
            case .cancel: CancelDragRequest.type
            }
        }

        var isCancel: Bool {
            if case .cancel = self { true } else { false }
        }
    }

    let kind: Kind
    let context: RequestContext
    /// The window on another node a drop goes to, decided when it was checked; nil for every
    /// other ending, which is settled in its commit.
    var remote: RemoteReceiver? = nil
    /// The held `itemsDropped` (`HeldDrop`) its commit writes for a drop onto another window of
    /// this node, forgotten once delivered.
    var held: HeldDrop.Key? = nil
}
