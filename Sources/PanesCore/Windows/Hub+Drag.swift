import Logging

/// Drag and drop between scenes: a drag holds items on the server, the browser carries only
/// its identifier; the receiving scene drops it onto itself, another scene of the user, or
/// the new-window zone. The source always hears how its drag ended.
extension Hub {
    mutating func beginDrag(_ items: [DragItem], from scene: Scene) -> JSONValue {
        let drag = DragState.Drag(id: ids.token("drg_"), owner: scene.owner, source: scene.id, sourceSession: scene.session,
                                  items: items, expiresAt: now() + Millis(settings.dragLifetimeMs))
        drags.add(drag)
        shareDrag(drag)
        return ["drag": .string(drag.id), "expiresAt": .int(drag.expiresAt)]
    }

    /// Drops a drag. On one node it is delivered at once; in a cluster the drop is first a
    /// compare-and-set on the drag's channel (`Hub+ClusterDrags.swift`), answered when it is in.
    mutating func drop(_ dragID: String, target: DropTarget, operation: DragOperation, onto named: SceneID?,
                       from dropper: Scene, context: RequestContext) throws(PanesError) -> JSONValue? {
        guard let drag = drags[dragID], drag.expiresAt > now() else {
            throw PanesError(.dragNotFound, "no drag \(dragID) (unknown or expired)", field: "drag")
        }
        guard drag.phase == .pending else { throw alreadyEnded(drag) }
        if let index = drag.items.firstIndex(where: { !$0.operations.contains(operation) }) {
            throw PanesError(.operationNotAllowed, "item \(index) of the drag does not allow `\(operation.rawValue)`",
                             field: "operation")
        }
        guard dropper.owner == drag.owner || sharedDocuments(drag.items, between: drag.owner, and: dropper.owner) else {
            throw PanesError(.forbidden, "only scenes of the drag's user may drop it, unless it carries workspace documents both can see")
        }
        let dropping = Dropper(dropper)
        let remote = receiverElsewhere(of: target, named: named, dropper: dropping)
        if remote == nil {
            _ = try receiver(of: target, named: named, dropper: dropping)
        }
        if target == .newWindow { try checkNewWindows(for: drag, owner: dropper.owner) }
        if dragEndsInStore(drag, DragEnding(kind: .drop(target, operation, named, dropping), context: context,
                                            remote: remote)) {
            return nil
        }
        return try deliver(drag, target: target, operation: operation, onto: named, from: dropping)
    }

    /// Refuses a drop onto the new-window zone that could not open a window for every item: one
    /// no configuration accepts, or more windows than the user has room for
    /// (`maxSessionsPerUser`). Checked before any window is made, so a refused drop made none.
    func checkNewWindows(for drag: DragState.Drag, owner: OwnerKey) throws(PanesError) {
        for (index, item) in drag.items.enumerated()
        where !configurations.contains(where: { $0.accepts(item.activity.activityType) }) {
            throw PanesError(.unsupportedActivity, "no scene configuration accepts item \(index)'s `\(item.activity.activityType)`",
                             field: "drag")
        }
        let count = sessions.count(of: owner)
        guard count + drag.items.count <= settings.maxSessionsPerUser else {
            throw PanesError(.tooMany, "\(owner) already has \(count) sessions, and a window for each of the drag's "
                                 + "\(drag.items.count) items would pass `maxSessionsPerUser`; discard some")
        }
    }

    /// A drop onto the new-window zone: a window per item, for `owner` (the dropper).
    mutating func deliverToNewWindows(_ drag: DragState.Drag, operation: DragOperation, owner: OwnerKey,
                                      clientVersion: String) throws(PanesError) -> JSONValue {
        try checkNewWindows(for: drag, owner: owner)
        var windows: [JSONValue] = []
        for item in drag.items {
            windows.append(try openWindow(for: item.activity, reopening: nil, owner: owner, clientVersion: clientVersion,
                                          drag: drag.id))
        }
        markDropped(drag, operation: operation,
                    target: ["kind": "newWindow", "sessions": .array(windows.compactMap { $0["session"] })])
        return ["windows": .array(windows), "operation": .string(operation.rawValue)]
    }

    /// The error a drop or cancel of an ended drag gets.
    func alreadyEnded(_ drag: DragState.Drag) -> PanesError {
        PanesError(.dragAlreadyDropped, "drag \(drag.id) was already \(drag.phase == .cancelled ? "cancelled" : "dropped")",
                   field: "drag")
    }

    /// The other scene here a drop onto a scene goes to: the one it names, a live scene of the
    /// dropper's user here; nil for a drop onto the dropper itself (none named, or itself) and
    /// for the new-window zone.
    func receiver(of target: DropTarget, named: SceneID?, dropper: Dropper) throws(PanesError) -> Scene? {
        guard target == .scene, !dropper.isItself(named), let named else { return nil }
        guard let scene = scenes[named], scene.owner == dropper.owner else {
            throw PanesError(.sceneNotFound, "no live scene \(named) of yours", field: "scene")
        }
        return scene
    }

    /// Hands a checked drop's items over to a window here (or the dropper, or new windows) and
    /// tells the source: the drop has won. The dropper need not be live: in a cluster its window
    /// may have closed before the store ordered the drop (`dragEndCommitted`), which hands a
    /// drop onto a window on another node to that node instead (`Hub+RemoteDrops.swift`).
    mutating func deliver(_ drag: DragState.Drag, target: DropTarget, operation: DragOperation, onto named: SceneID?,
                          from dropper: Dropper) throws(PanesError) -> JSONValue {
        switch target {
        case .scene:
            guard let receiver = try receiver(of: target, named: named, dropper: dropper) else {
                return deliverToDropper(drag, operation: operation, dropper)
            }
            send(.event(ServerEvent("itemsDropped", itemsDroppedFields(drag, operation: operation))),
                 to: receiver.connection)
            markDropped(drag, operation: operation, target: [
                "kind": "scene", "scene": .string(receiver.id.rawValue), "session": .string(receiver.session.rawValue),
            ])
            return ["delivered": .string(receiver.id.rawValue)]
        case .newWindow:
            return try deliverToNewWindows(drag, operation: operation, owner: dropper.owner,
                                           clientVersion: dropper.clientVersion)
        }
    }

    /// The `itemsDropped` event's fields, for the window a drop is delivered to (here, or on
    /// another node: `Hub+RemoteDrops.swift`).
    func itemsDroppedFields(_ drag: DragState.Drag, operation: DragOperation) -> JSONObject {
        ["drag": .string(drag.id), "items": .array(drag.items.map(\.activity.json)), "operation": .string(operation.rawValue),
         "source": ["scene": .string(drag.source.rawValue), "session": .string(drag.sourceSession.rawValue)]]
    }

    /// The source's `dragEnded` fields for a drop onto `target`.
    func droppedFields(_ drag: DragState.Drag, operation: DragOperation, target: JSONValue) -> JSONObject {
        ["drag": .string(drag.id), "outcome": "dropped", "operation": .string(operation.rawValue), "target": target]
    }

    /// A drop onto the dropper itself: the answer is the items.
    mutating func deliverToDropper(_ drag: DragState.Drag, operation: DragOperation, _ dropper: Dropper) -> JSONValue {
        markDropped(drag, operation: operation, target: [
            "kind": "scene", "scene": .string(dropper.scene.rawValue), "session": .string(dropper.session.rawValue),
        ])
        return droppedItems(drag, operation: operation)
    }

    /// The answer to a drop onto the dropper itself; known before a cluster's commit, which
    /// records it under the drop's key (`endInStore`).
    func droppedItems(_ drag: DragState.Drag, operation: DragOperation) -> JSONValue {
        ["items": .array(drag.items.map(\.activity.json)), "operation": .string(operation.rawValue)]
    }

    /// The drag is dropped: so marked, and its source told where it went.
    private mutating func markDropped(_ drag: DragState.Drag, operation: DragOperation, target: JSONValue) {
        drags.setPhase(.dropped, of: drag.id)
        tellSource(of: drag, ServerEvent("dragEnded", droppedFields(drag, operation: operation, target: target)))
    }

    mutating func cancelDrag(_ dragID: String, from scene: Scene, context: RequestContext) throws(PanesError) -> JSONValue? {
        guard let drag = drags[dragID], drag.expiresAt > now(), drag.owner == scene.owner else {
            throw PanesError(.dragNotFound, "no drag \(dragID) (unknown or expired)", field: "drag")
        }
        guard drag.phase == .pending else {
            throw PanesError(.dragAlreadyDropped, "drag \(dragID) already ended", field: "drag")
        }
        // A cancel racing a drop on another node: one of the two ends the drag.
        if dragEndsInStore(drag, DragEnding(kind: .cancel, context: context)) { return nil }
        endDrag(drag, reason: "cancelled by its source")
        return [:]
    }

    /// Cancels a pending drag and tells its source, which is never left waiting.
    mutating func endDrag(_ drag: DragState.Drag, reason: String) {
        drags.setPhase(.cancelled, of: drag.id)
        tellSource(of: drag, ServerEvent("dragEnded", ["drag": .string(drag.id), "outcome": "cancelled",
                                                       "reason": .string(reason)]))
    }

    /// A drag dropped by another user is allowed only if every item is a document of the
    /// shared workspace, which both can see.
    func sharedDocuments(_ items: [DragItem], between a: OwnerKey, and b: OwnerKey) -> Bool {
        Identifier.equal(a.workspace, b.workspace) && items.allSatisfy { item in
            item.activity.activityType.hasPrefix("panes.document")
                && item.activity.targetContentIdentifier.map { documentIsVisible($0, inWorkspace: a.workspace, to: [a.user, b.user]) } == true
        }
    }

    mutating func expireDrags(now: Millis) {
        for id in drags.popDue(now: now) {
            guard let drag = drags[id], drag.expiresAt <= now else { continue }
            if drag.phase == .unsettled {
                // Dropped through another node that never said where the items went.
                if let at = drag.recoverAt, at <= now { recoverDrop(drag) }
                continue
            }
            // An expiry is reported by the node the drag began on; every node drops its copy. In
            // a cluster it is ordered in the store like a drop, so a drop made through another
            // node in the last moment and the expiry are not both reported.
            if drag.phase == .pending, drag.origin == nil {
                // Kept until the store says how it ended: a drop that won is told here by
                // its node's `dragEnded`, and this node tells the source.
                if dragExpiresInStore(drag) { continue }
                endDrag(drag, reason: "expired")
            }
            drags.remove(drag.id)
        }
    }
    /// Sends `dragEnded` to the drag's source when it is a scene here; the seam's
    /// `shareDragEnded` tells the other nodes (the source's, and every node marks the drag ended,
    /// so a second drop anywhere is told so); alone it does nothing.
    mutating func tellSource(of drag: DragState.Drag, _ event: ServerEvent) {
        tellSource(of: drag.id, source: drag.source, event)
    }

    mutating func tellSource(of dragID: String, source: SceneID, _ event: ServerEvent) {
        if let scene = scenes[source] {
            send(.event(event), to: scene.connection)
        }
        shareDragEnded(dragID, event)
    }

    // Drags outlive their source scene: another window can still drop them; only the
    // `dragEnded` notice has no one to go to. So a scene's end does nothing to them.
}
