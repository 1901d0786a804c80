import Logging

/// A drop onto a window live on another node (the switcher lists it there), once its drag's
/// ending is in the store (`dragEndCommitted`). Only that node talks to the window, and the
/// window may have closed there since it last told: so the drop is offered to it
/// (`NodeSignal.dropOffered`), and answered from what it says.
///
/// Where the items go is settled in the store, by one commit on the drag's channel at base 1
/// (`CoordinationCommand.settleDrop`), with the drop's key record, so that a retry through any
/// node learns the answer even if the dropping node goes now. The offer carries both records
/// (`{"delivered"}` and `{"items", "operation"}`) and the source's `dragEnded` for either case,
/// so the receiving node settles it whichever way it goes; the dropping node makes the same
/// commit only when that node does not (its answer says it did not, or none came). Exactly one
/// commit wins, so the items reach one window, never two and never none:
///
/// - The window is there: its node wins, delivers `itemsDropped`, tells the source `dragEnded`
///   (naming that window) and answers `dropReceived` delivered; the drop is answered
///   `{"delivered": scene}`.
/// - It is gone (or not the dropper's user's): its node settles the items as given back to the
///   dropper, tells the source (`dragEnded` naming the dropper, as on one node) and answers
///   `dropReceived` returned; the drop's answer is `{"items", "operation"}`.
/// - No answer within `dropConfirmTimeoutMs` (that node died, or is slow, or its answer was
///   lost with a listening connection), or this node drains: it tries to take the items back.
///   If the other node settled first, that commit conflicts, and the drop is answered from that
///   node's answer, or `{"delivered"}` when none comes within another `dropConfirmTimeoutMs`
///   (it died after its commit). A take-back the store will not take is tried only while this
///   node holds the drop's key, then given up (`giveUp`).
/// - Neither node settles it (both died, or this node before it offered): the drag's node does,
///   as returned to the source (`Hub+ClusterDrags.swift`, `recoverDrop`).
///
/// A repeated offer is answered as the first one was, and delivers nothing again (and a second
/// settling commit would conflict anyway).
extension Hub {
    // MARK: The dropping node

    /// Offers a drop whose ending is stored to the node where the scene it names is live, and
    /// waits for its answer, up to `dropConfirmTimeoutMs`.
    mutating func offerRemoteDrop(_ drag: DragState.Drag, operation: DragOperation, to remote: RemoteReceiver,
                                  from dropper: Dropper, context: RequestContext) {
        // Ended in the store: a second drop here is refused at once.
        drags.setPhase(.dropped, of: drag.id)
        let scene = JSONValue.string(remote.scene.rawValue)
        var offer: JSONObject = [
            "drag": .string(drag.id), "scene": scene,
            "workspace": .string(dropper.owner.workspace), "user": .string(dropper.owner.user),
            "event": .object(itemsDroppedFields(drag, operation: operation)),
            "ended": .object(droppedFields(drag, operation: operation, target: [
                "kind": "scene", "scene": scene, "session": .string(remote.session.rawValue),
            ])),
        ]
        if let record = keyRecordInCommit(context, result: ["delivered": scene]) { offer["record"] = record.json }
        // What settles it for the dropper, for the receiving node to commit itself when the
        // window is gone there: then the items and the answer are settled even if this node
        // goes before it hears (a drain, a rejoin, a crash).
        offer["returnEnded"] = .object(droppedFields(drag, operation: operation, target: [
            "kind": "scene", "scene": .string(dropper.scene.rawValue), "session": .string(dropper.session.rawValue),
        ]))
        if let record = keyRecordInCommit(context, result: droppedItems(drag, operation: operation)) {
            offer["returnRecord"] = record.json
        }
        cluster.remoteDrops[Identifier(drag.id)] = RemoteDrop(drag: drag, operation: operation, receiver: remote,
                                                              dropper: dropper, context: context, offeredAt: monotonic())
        cluster.remoteDropDeadlines.push(drag.id, at: monotonic() + Millis(settings.dropConfirmTimeoutMs))
        signal(.dropOffered(.object(offer)), to: remote.node)
    }

    /// The receiving node's answer: delivered (the drop is answered so), or not (the items are
    /// taken back). Only from the node the drop was offered to, about the scene it names.
    mutating func remoteDropReceived(_ answer: JSONValue, from node: NodeID) {
        guard let id = answer["drag"]?.stringValue, var drop = cluster.remoteDrops[Identifier(id)],
              drop.receiver.node == node,
              answer["scene"]?.stringValue.map({ SceneID($0) == drop.receiver.scene }) == true else { return }
        let settled: RemoteDrop.Settled? = answer["delivered"] == true ? .delivered
            : answer["returned"] == true ? .returned : nil
        if drop.returning {
            // This node's take-back is in flight: its outcome says who won, and when the other
            // node did, this says how.
            drop.heard = settled ?? .neither
            cluster.remoteDrops[Identifier(id)] = drop
            return
        }
        switch settled {
        case .delivered: answerDelivered(id)
        case .returned: answerReturned(id)
        case .neither, nil:
            // Not settled there (the window is gone and the offer came without what settles
            // it for the dropper, or that node's commit failed): settled here, unless this
            // node's take-back conflicted already: then neither settled it, and the drag's node
            // did (`recoverDrop`), for its source.
            if drop.settledThere { answerSettledNowhere(id) } else { takeBack(drop) }
        }
    }

    /// On a drain: every drop still waiting is taken back now, as after its timeout (the
    /// store's compare-and-set still says who won), so that the answer and the items are
    /// settled before this node goes (the drain waits for commits in flight). Waiting instead
    /// would leave them nowhere: nobody else hears the receiving node's answer.
    mutating func takeBackRemoteDrops() {
        for drop in cluster.remoteDrops.values.sorted(by: { $0.drag.id < $1.drag.id }) where !drop.returning {
            takeBack(drop)
        }
    }

    /// Drops whose receiving node has not answered in time: taken back, unless it delivered first.
    mutating func expireRemoteDrops(now: Millis) {
        for (_, id) in cluster.remoteDropDeadlines.popDue(now: now) {
            guard let drop = cluster.remoteDrops[Identifier(id)], !drop.returning else { continue }
            if drop.settledThere {
                // The other node settled it and has not said how since: it died after its
                // commit. Read as delivered (it commits before it delivers and tells).
                answerDelivered(id)
                continue
            }
            logger.notice("a drop onto a window on another node was not confirmed in time; taking its items back",
                          metadata: ["drag": "\(id)", "node": "\(drop.receiver.node)"])
            takeBack(drop)
        }
    }

    /// Settles the drop as given back to the dropper, in the store, where the receiving node's
    /// delivery may have won already (`dropReturnCommitted`). The answer, the items, goes in
    /// the same commit under the drop's key, only while this node still holds the key's
    /// reservation (as the receiving node's settling does): a retry through another node that
    /// took the key over once this node's lease ran out, was refused and freed it, leaves
    /// nothing here to write over, and the drop is left to the drag's node (`giveUp`), instead
    /// of being answered with items the retry was told went nowhere.
    private mutating func takeBack(_ drop: RemoteDrop) {
        var returning = drop
        returning.returning = true
        cluster.remoteDrops[Identifier(drop.drag.id)] = returning
        var commands: [StoreCommand] = [.coordination(.settleDrop(drop.drag.id))]
        if let record = keyRecordInCommit(drop.context, result: droppedItems(drop.drag, operation: drop.operation)),
           let node {
            commands.append(.coordination(.recordHeldRequest(record, holder: node)))
        }
        let id = commits.makeID()
        commits.pending[id] = .dropReturn(drop)
        submit(Commit(id: id, channel: .coordination(.drag(Identifier(drop.drag.id))), base: 1, commands: commands))
    }

    /// The store's answer to taking the items back.
    mutating func dropReturnCommitted(_ drop: RemoteDrop, _ outcome: CommitOutcome) {
        let id = drop.drag.id
        switch outcome {
        case .committed:
            cluster.remoteDrops[Identifier(id)] = nil
            logger.notice("a drop's receiver on another node did not take it; its items go to the dropper",
                          metadata: ["drag": "\(id)", "node": "\(drop.receiver.node)"])
            let result = deliverToDropper(drop.drag, operation: drop.operation, drop.dropper)
            send(.reply(drop.context.id, result: result), to: drop.context.connection)
        case .conflict, .behind:
            // The receiving node settled it first (with the drop's key record) and told the
            // source: it delivered the items, or gave them back to the dropper (the window gone
            // there). Its answer says which; until it comes, the drop waits for it, another
            // `dropConfirmTimeoutMs`, then is read as delivered. (The same is read when the
            // drag's `drag_ends` row was pruned meanwhile, `dragEndRetentionMs` after its
            // ending, far past this wait.)
            switch drop.heard {
            case .delivered: answerDelivered(id)
            case .returned: answerReturned(id)
            case .neither: answerSettledNowhere(id)
            case nil:
                var waiting = drop
                waiting.returning = false
                waiting.settledThere = true
                cluster.remoteDrops[Identifier(id)] = waiting
                cluster.remoteDropDeadlines.push(id, at: monotonic() + Millis(settings.dropConfirmTimeoutMs))
            }
        case .recorded(let found):
            // Another attempt of this drop, through another node, was recorded first: its
            // record is the answer.
            cluster.remoteDrops[Identifier(id)] = nil
            if let record = found.first(where: { $0.slot == drop.context.key }) {
                answerFromStore(drop.context, request: DropRequest.type, record)
            }
        case .failed(let reason), .unknown(let reason):
            // (`.unknown` never comes here: `committed` answers it `outcome_unknown` and the
            // real outcome follows.) Nothing settled: asked again after another timeout, while
            // this node's reservation of the drop's key stands (`nodeLeaseMs` from the drop, a
            // heartbeat spared). Past that another node may take the key over, so this node
            // settles nothing more: it gives the drop up (`giveUp`). The drop is in the store,
            // so it is not refused; its answer waits.
            let reserved = drop.offeredAt + Millis(settings.nodeLeaseMs - settings.nodeHeartbeatMs)
            guard monotonic() + Millis(settings.dropConfirmTimeoutMs) <= reserved else {
                giveUp(drop, reason: reason)
                return
            }
            logLimited(.error, "a drop's items could not be taken back; trying again",
                       metadata: ["drag": "\(id)", "reason": "\(reason)"])
            var waiting = drop
            waiting.returning = false
            cluster.remoteDrops[Identifier(id)] = waiting
            cluster.remoteDropDeadlines.push(id, at: monotonic() + Millis(settings.dropConfirmTimeoutMs))
        }
    }

    /// A take-back the store would not take within the key's reservation: this node stops
    /// trying, so that it never settles the drop once a retry through another node may have
    /// taken the key over. The drop stays unsettled in the store unless the window's node
    /// settled it: the drag's node settles it as returned after `recoveryWait` (this node,
    /// when the drag began here). The dropper is told `outcome_unknown`: its key is free again,
    /// and a retry gets the window's node's record (`{"delivered"}` or the items) or, re-made,
    /// `drag_already_dropped` (`drag_not_found` once expired). A window's node slow to read the
    /// offer settles nothing once the key is freed or taken over: its commit needs this node's
    /// reservation still held (`CoordinationCommand.recordHeldRequest`).
    private mutating func giveUp(_ drop: RemoteDrop, reason: String) {
        let id = drop.drag.id
        cluster.remoteDrops[Identifier(id)] = nil
        logLimited(.error, "a drop's items could not be taken back before its key's reservation ran out; left to the drag's node",
                   metadata: ["drag": "\(id)", "reason": "\(reason)"])
        // The drag's entry may be gone: its expiry, past by now, found it dropped here and made
        // no commit of its own. The drop keeps the drag, which is put back to be settled.
        if drop.drag.origin == nil {
            drags.awaitSettling(drop.drag, recoverAt: max(drop.drag.expiresAt, now()) + recoveryWait)
        }
        fail(drop.context.id, request: DropRequest.type,
             Self.outcomeUnknown("the drop's items could not be settled in time; retry with its idempotencyKey"),
             to: drop.context.connection)
    }

    /// Answers a drop its receiving node delivered: the source was told by that node, and the
    /// drop's key record went in with its commit.
    private mutating func answerDelivered(_ id: String) {
        guard let drop = cluster.remoteDrops.removeValue(forKey: Identifier(id)) else { return }
        send(.reply(drop.context.id, result: ["delivered": .string(drop.receiver.scene.rawValue)]),
             to: drop.context.connection)
    }

    /// Answers a drop its receiving node gave back to the dropper (the window gone there): the
    /// answer is the items, as on one node; that node told the source, and the drop's key
    /// record of the items went in with its commit.
    private mutating func answerReturned(_ id: String) {
        guard let drop = cluster.remoteDrops.removeValue(forKey: Identifier(id)) else { return }
        logger.notice("a drop's receiver on another node did not take it and gave its items to the dropper",
                      metadata: ["drag": "\(id)", "node": "\(drop.receiver.node)"])
        send(.reply(drop.context.id, result: droppedItems(drop.drag, operation: drop.operation)),
             to: drop.context.connection)
    }

    /// Answers a drop that neither this node nor the window's node settled: the node the drag
    /// began on did, as returned to its source (`recoverDrop`), after this node's take-back
    /// failed for longer than `recoveryWait`. Nothing of the drop was applied for the dropper:
    /// it gets the error a retry would get, and the source keeps the items.
    private mutating func answerSettledNowhere(_ id: String) {
        guard let drop = cluster.remoteDrops.removeValue(forKey: Identifier(id)) else { return }
        logger.notice("a drop's items were settled by the drag's node for its source",
                      metadata: ["drag": "\(id)", "node": "\(drop.receiver.node)"])
        fail(drop.context.id, request: DropRequest.type,
             PanesError(.dragAlreadyDropped, "drag \(id) ended, but its items reached no window: its source keeps them",
                        field: "drag"),
             to: drop.context.connection)
    }

    // MARK: The receiving node

    /// A drop another node took, onto a scene here: settled in the store, then delivered. A
    /// scene that is gone, or is not the dropper's user's, gets nothing: the items are settled
    /// as the dropper's, here.
    mutating func takeRemoteDrop(_ offer: JSONValue, from origin: NodeID) {
        guard let id = offer["drag"]?.stringValue, let scene = offer["scene"]?.stringValue.map(SceneID.init),
              let workspace = offer["workspace"]?.stringValue, let user = offer["user"]?.stringValue,
              let event = offer["event"]?.objectValue, let ended = offer["ended"]?.objectValue else { return }
        if let receipt = cluster.dropReceipts[Identifier(id)] {
            // Offered again: answered as the first time, delivered at most once. One still
            // settling is answered when its commit is back.
            if let delivered = receipt.delivered {
                answerOffer(id, scene: scene, delivered: delivered, returned: receipt.returned, to: origin)
            }
            return
        }
        let owner = OwnerKey(workspace: workspace, user: user)
        // The records are the dropper's key's: of the dropper's user, or none at all.
        func record(_ name: String) -> RequestRecord?? {
            guard let json = offer[name] else { return .some(nil) }
            guard let record = RequestRecord(json: json), record.slot.owner == owner else { return nil }
            return .some(record)
        }
        let returnEnded = offer["returnEnded"]?.objectValue
        var receipt = DropReceipt(scene: scene, origin: origin, event: event, ended: ended)
        guard let delivered = record("record"), let returned = record("returnRecord") else {
            // Not a drop a node makes: nothing is settled here (the dropping node settles it).
            keep(receipt, of: id)
            settleReceipt(id, delivered: false)
            return
        }
        let record: RequestRecord?
        if let target = scenes[scene], target.owner == owner {
            record = delivered
            receipt.heldFor = target.session
        } else if let returnEnded {
            // The window is gone (or is not the dropper's user's): the items go back to the
            // dropper, settled here, so that they are even if the dropping node goes before it
            // hears this answer.
            receipt.returnEnded = returnEnded
            record = returned
        } else {
            // An offer from a node that sends no `returnEnded`: it takes the items back itself.
            keep(receipt, of: id)
            settleReceipt(id, delivered: false)
            return
        }
        keep(receipt, of: id)
        var commands: [StoreCommand] = [.coordination(.settleDrop(id))]
        // Written over the dropping node's reservation of the key, only while it still holds
        // it: once it gave the drop up (answered `outcome_unknown` and freed the key), or a
        // retry through another node took the key over (and may have been refused), this
        // commit is refused and nothing is delivered here; the drag's node then settles the
        // drop as returned to its source (`recoverDrop`).
        if let record { commands.append(.coordination(.recordHeldRequest(record, holder: origin))) }
        // The window's `itemsDropped`, held until sent: if this node dies after the commit and
        // before it sends it, the node the window's session resumes on does (`Hub+HeldDrops.swift`).
        if let session = receipt.heldFor { commands.append(holdDrop(event, of: id, for: session)) }
        let commitID = commits.makeID()
        commits.pending[commitID] = .dropSettle(id)
        submit(Commit(id: commitID, channel: .coordination(.drag(Identifier(id))), base: 1, commands: commands))
    }

    /// The store's answer to settling a drop here: delivered now, or not at all (the dropping
    /// node took the items back first, or the store could not take it).
    mutating func dropSettleCommitted(_ id: String, _ outcome: CommitOutcome) {
        guard let receipt = cluster.dropReceipts[Identifier(id)] else { return }
        switch outcome {
        case .committed:
            // Given back to the dropper (the window gone here), the dropping node answers with
            // the items. Otherwise the window gets them (its session's window now, if it
            // reconnected here during the commit); one that closed or moved during the commit
            // has them kept held, and gets them when its session next attaches, here or on the
            // node that takes it over (`Hub+HeldDrops.swift`).
            let returned = receipt.returnEnded != nil
            let target = scenes[receipt.scene] ?? receipt.heldFor.flatMap { scenes.live(of: $0) }
            if !returned, let target {
                send(.event(ServerEvent("itemsDropped", receipt.event)), to: target.connection)
                if let session = receipt.heldFor { releaseHeldDrop(HeldDrop.Key(session: session, drag: Identifier(id))) }
            } else if let session = receipt.heldFor {
                if returned {
                    releaseHeldDrop(HeldDrop.Key(session: session, drag: Identifier(id)))
                } else {
                    markHeldDrops(of: session)
                }
            }
            drags.setPhase(.dropped, of: id)
            if let source = receipt.event["source"]?["scene"]?.stringValue {
                tellSource(of: id, source: SceneID(source), ServerEvent("dragEnded", receipt.returnEnded ?? receipt.ended))
            }
            settleReceipt(id, delivered: !returned, returned: returned)
        case .failed(let reason):
            // The dropping node no longer holds the drop's key (it gave the drop up, or a retry
            // through another node took the key over), or the store could not take it: nothing
            // is delivered here.
            logLimited(.notice, "a drop another node offered was not settled here; its items are left to that node or the drag's node",
                       metadata: ["drag": "\(id)", "node": "\(receipt.origin)", "reason": "\(reason)"])
            settleReceipt(id, delivered: false)
        case .conflict, .behind, .recorded, .unknown:
            settleReceipt(id, delivered: false)
        }
    }

    private mutating func keep(_ receipt: DropReceipt, of id: String) {
        cluster.dropReceipts[Identifier(id)] = receipt
        // Kept past the dropping node's wait: a repeated offer comes within it.
        cluster.dropReceiptDeadlines.push(id, at: monotonic() + 2 * Millis(settings.dropConfirmTimeoutMs)
                                              + Millis(settings.nodeLeaseMs))
    }

    private mutating func settleReceipt(_ id: String, delivered: Bool, returned: Bool = false) {
        guard var receipt = cluster.dropReceipts[Identifier(id)] else { return }
        receipt.delivered = delivered
        receipt.returned = returned
        cluster.dropReceipts[Identifier(id)] = receipt
        answerOffer(id, scene: receipt.scene, delivered: delivered, returned: returned, to: receipt.origin)
    }

    private mutating func answerOffer(_ id: String, scene: SceneID, delivered: Bool, returned: Bool, to origin: NodeID) {
        var answer: JSONObject = ["drag": .string(id), "scene": .string(scene.rawValue), "delivered": .bool(delivered)]
        if returned { answer["returned"] = true }
        signal(.dropReceived(.object(answer)), to: origin)
    }

    /// Receipts past their keeping: a later offer of the drop would only conflict in the store.
    mutating func forgetDropReceipts(now: Millis) {
        for (deadline, id) in cluster.dropReceiptDeadlines.popDue(now: now) {
            guard cluster.dropReceipts[Identifier(id)]?.delivered != nil else {
                // Still settling: looked at again later.
                if cluster.dropReceipts[Identifier(id)] != nil {
                    cluster.dropReceiptDeadlines.push(id, at: deadline + Millis(settings.dropConfirmTimeoutMs))
                }
                continue
            }
            cluster.dropReceipts[Identifier(id)] = nil
        }
    }
}
