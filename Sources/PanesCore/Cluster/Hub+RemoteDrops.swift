import Logging

/// A drop onto a window live on another node (the switcher lists it there), once its drag's
/// ending is in the store (`dragEndCommitted`). Only that node talks to the window, and the
/// window may have closed there since it last told: so the drop is offered to it
/// (`NodeSignal.dropOffered`), and answered from what it says.
///
/// Where the items go is settled in the store, by one commit on the drag's channel at base 1
/// (`CoordinationCommand.settleDrop`): the receiving node makes it before it delivers (with
/// the drop's key record, so a retry through any node learns `{"delivered"}` even if the
/// dropping node dies now), the dropping node makes it before it gives the items back to the
/// dropper (with the key record of the items). Exactly one of the two wins, so the items reach
/// one window, never two and never none:
///
/// - The window is there: its node wins, delivers `itemsDropped`, tells the source `dragEnded`
///   (naming that window) and answers `dropReceived` delivered; the drop is answered
///   `{"delivered": scene}`.
/// - It is gone (or not the dropper's user's): its node answers `dropReceived` not delivered
///   at once; the dropping node takes the items back: the drop's answer is `{"items",
///   "operation"}`, and the source's `dragEnded` names the dropper, as on one node.
/// - No answer within `dropConfirmTimeoutMs` (that node died, or is slow, or its answer was
///   lost with a listening connection): the dropping node tries to take the items back. If the
///   other node delivered first, that commit conflicts, and the drop is answered `{"delivered"}`.
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
        cluster.remoteDrops[Identifier(drag.id)] = RemoteDrop(drag: drag, operation: operation, receiver: remote,
                                                              dropper: dropper, context: context)
        cluster.remoteDropDeadlines.push(drag.id, at: monotonic() + Millis(settings.dropConfirmTimeoutMs))
        signal(.dropOffered(.object(offer)), to: remote.node)
    }

    /// The receiving node's answer: delivered (the drop is answered so), or not (the items are
    /// taken back). Only from the node the drop was offered to, about the scene it names.
    mutating func remoteDropReceived(_ answer: JSONValue, from node: NodeID) {
        guard let id = answer["drag"]?.stringValue, let drop = cluster.remoteDrops[Identifier(id)],
              !drop.returning, drop.receiver.node == node,
              answer["scene"]?.stringValue.map({ SceneID($0) == drop.receiver.scene }) == true else { return }
        if answer["delivered"] == true {
            answerDelivered(id)
        } else {
            takeBack(drop)
        }
    }

    /// Drops whose receiving node has not answered in time: taken back, unless it delivered first.
    mutating func expireRemoteDrops(now: Millis) {
        for (_, id) in cluster.remoteDropDeadlines.popDue(now: now) {
            guard let drop = cluster.remoteDrops[Identifier(id)], !drop.returning else { continue }
            logger.notice("a drop onto a window on another node was not confirmed in time; taking its items back",
                          metadata: ["drag": "\(id)", "node": "\(drop.receiver.node)"])
            takeBack(drop)
        }
    }

    /// Settles the drop as given back to the dropper, in the store, where the receiving node's
    /// delivery may have won already (`dropReturnCommitted`). The answer, the items, goes in
    /// the same commit under the drop's key.
    private mutating func takeBack(_ drop: RemoteDrop) {
        var returning = drop
        returning.returning = true
        cluster.remoteDrops[Identifier(drop.drag.id)] = returning
        var commands: [StoreCommand] = [.coordination(.settleDrop(drop.drag.id))]
        if let record = commitRecord(drop.context, result: droppedItems(drop.drag, operation: drop.operation)) {
            commands.append(record)
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
            // The receiving node settled it first: it delivered the items (with the drop's key
            // record) and told the source.
            answerDelivered(id)
        case .recorded(let found):
            // Another attempt of this drop, through another node, was recorded first: its
            // record is the answer.
            cluster.remoteDrops[Identifier(id)] = nil
            if let record = found.first(where: { $0.slot == drop.context.key }) {
                answerFromStore(drop.context, request: DropRequest.type, record)
            }
        case .unknown:
            // Answered `outcome_unknown` (`commitOutcomeUnknown`); the real outcome comes later.
            return
        case .failed(let reason):
            // Nothing settled: asked again after another timeout, for as long as the store is
            // away. The drop is in the store, so it is not refused; its answer waits.
            logLimited(.error, "a drop's items could not be taken back; trying again",
                       metadata: ["drag": "\(id)", "reason": "\(reason)"])
            var waiting = drop
            waiting.returning = false
            cluster.remoteDrops[Identifier(id)] = waiting
            cluster.remoteDropDeadlines.push(id, at: monotonic() + Millis(settings.dropConfirmTimeoutMs))
        }
    }

    /// Answers a drop its receiving node delivered: the source was told by that node, and the
    /// drop's key record went in with its commit.
    private mutating func answerDelivered(_ id: String) {
        guard let drop = cluster.remoteDrops.removeValue(forKey: Identifier(id)) else { return }
        send(.reply(drop.context.id, result: ["delivered": .string(drop.receiver.scene.rawValue)]),
             to: drop.context.connection)
    }

    // MARK: The receiving node

    /// A drop another node took, onto a scene here: settled in the store, then delivered. A
    /// scene that is gone, or is not the dropper's user's, gets nothing: the other node takes
    /// the items back.
    mutating func takeRemoteDrop(_ offer: JSONValue, from origin: NodeID) {
        guard let id = offer["drag"]?.stringValue, let scene = offer["scene"]?.stringValue.map(SceneID.init),
              let workspace = offer["workspace"]?.stringValue, let user = offer["user"]?.stringValue,
              let event = offer["event"]?.objectValue, let ended = offer["ended"]?.objectValue else { return }
        if let receipt = cluster.dropReceipts[Identifier(id)] {
            // Offered again: answered as the first time, delivered at most once. One still
            // settling is answered when its commit is back.
            if let delivered = receipt.delivered { answerOffer(id, scene: scene, delivered: delivered, to: origin) }
            return
        }
        let owner = OwnerKey(workspace: workspace, user: user)
        let record = offer["record"].flatMap(RequestRecord.init(json:))
        let receipt = DropReceipt(scene: scene, origin: origin, event: event, ended: ended)
        keep(receipt, of: id)
        guard let target = scenes[scene], target.owner == owner, offer["record"] == nil || record != nil else {
            settleReceipt(id, delivered: false)
            return
        }
        var commands: [StoreCommand] = [.coordination(.settleDrop(id))]
        // The dropping node's reservation of the key: the record is written over it.
        if let record { commands.append(.coordination(.recordKeyedRequest(record, node: origin, report: nil))) }
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
            // A window that closed during the commit gets nothing, as one closing the instant
            // after it got the items.
            if let target = scenes[receipt.scene] {
                send(.event(ServerEvent("itemsDropped", receipt.event)), to: target.connection)
            }
            drags.setPhase(.dropped, of: id)
            if let source = receipt.event["source"]?["scene"]?.stringValue {
                tellSource(of: id, source: SceneID(source), ServerEvent("dragEnded", receipt.ended))
            }
            settleReceipt(id, delivered: true)
        case .unknown:
            return
        case .conflict, .behind, .recorded, .failed:
            settleReceipt(id, delivered: false)
        }
    }

    private mutating func keep(_ receipt: DropReceipt, of id: String) {
        cluster.dropReceipts[Identifier(id)] = receipt
        // Kept past the dropping node's wait: a repeated offer comes within it.
        cluster.dropReceiptDeadlines.push(id, at: monotonic() + 2 * Millis(settings.dropConfirmTimeoutMs)
                                              + Millis(settings.nodeLeaseMs))
    }

    private mutating func settleReceipt(_ id: String, delivered: Bool) {
        guard var receipt = cluster.dropReceipts[Identifier(id)] else { return }
        receipt.delivered = delivered
        cluster.dropReceipts[Identifier(id)] = receipt
        answerOffer(id, scene: receipt.scene, delivered: delivered, to: receipt.origin)
    }

    private mutating func answerOffer(_ id: String, scene: SceneID, delivered: Bool, to origin: NodeID) {
        signal(.dropReceived(["drag": .string(id), "scene": .string(scene.rawValue), "delivered": .bool(delivered)]),
               to: origin)
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

/// The node, scene and session a drop onto a scene live on another node goes to
/// (`Hub.receiverElsewhere`).
struct RemoteReceiver: Sendable {
    let node: NodeID
    let scene: SceneID
    let session: SessionID
}

/// A drop this node took onto a window on another node, waiting for that node's answer.
struct RemoteDrop: Sendable {
    let drag: DragState.Drag
    let operation: DragOperation
    let receiver: RemoteReceiver
    let dropper: Dropper
    let context: RequestContext
    /// Its commit taking the items back is in flight: an answer from the receiving node now
    /// changes nothing (the commit's outcome says who won).
    var returning = false
}

/// A drop another node offered to a scene here, kept so that a repeated offer is answered the
/// same and delivers nothing again.
struct DropReceipt: Sendable {
    let scene: SceneID
    let origin: NodeID
    /// The `itemsDropped` event's fields, and the source's `dragEnded` fields.
    let event: JSONObject
    let ended: JSONObject
    /// Nil while its commit is in flight.
    var delivered: Bool? = nil
}
