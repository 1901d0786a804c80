import Logging

/// The windows a drop onto the new-window zone asks for, chosen before the commit that ends the
/// drag in a cluster: their sessions' identifiers, and the row (`HeldDrop`) that commit holds
/// for the dropping window's session, keyed by that session and the drag.
struct HeldWindows: Sendable {
    let key: HeldDrop.Key
    /// One per item, in the drag's order: the sessions the windows open.
    let sessions: [SessionID]

    /// The session chosen for item `index`, if one was.
    func session(_ index: Int) -> SessionID? {
        sessions.indices.contains(index) ? sessions[index] : nil
    }
}

/// Drops onto the new-window zone in a cluster, held until a window they asked for connects
/// (issue 27). The commit that ends the drag also holds the drop for the dropping window's
/// session (`holdWindows`): the drag's items and the sessions chosen for them. The node that
/// took the drop makes those sessions and answers with their tickets (`deliverToNewWindows`);
/// each ticket names the held row (`Ticket.held`), and the first of them redeemed, through any
/// node, forgets it (`Hub.ticketUsed`). If the node dies after the commit (before it answered,
/// or before the window connected through a ticket only it knew), the dropping window's client
/// resumes its session through any node, whose claim finds the row, and that node sends the
/// window `openWindows` with new tickets (`sendHeldWindows`): the sessions chosen are reused
/// when they exist, so the user gets one window per item, and the client opens a drag's windows
/// once (it remembers the drags it applied, PROTOCOL.md, drop).
extension Hub {
    /// The command that holds a drop onto the new-window zone for the dropping window's session:
    /// the `itemsDropped` fields (what the window gets if no window can be opened) and the sessions.
    func holdWindows(_ drag: DragState.Drag, operation: DragOperation, _ windows: HeldWindows) -> StoreCommand {
        var event = itemsDroppedFields(drag, operation: operation)
        event["sessions"] = .array(windows.sessions.map { .string($0.rawValue) })
        return holdDrop(event, of: drag.id, for: windows.key.session)
    }

    /// The windows a drop onto the new-window zone through this node will open.
    mutating func planWindows(for drag: DragState.Drag, dropper: Dropper) -> HeldWindows {
        HeldWindows(key: HeldDrop.Key(session: dropper.session, drag: Identifier(drag.id)),
                    sessions: drag.items.map { _ in ids.sessionID() })
    }

    /// A held drop onto the new-window zone (`HeldDrop.opensWindows`), read for the dropping
    /// window's session now live here as `scene`: it gets `openWindows` with a ticket for each
    /// window not live anywhere yet; the row stays until one of them connects. If none can be
    /// opened any more (no configuration accepts an item, or the user's sessions are full), the
    /// items come back to the window as `itemsDropped`, as a drop whose new windows could not be
    /// made does, and the row is forgotten.
    mutating func sendHeldWindows(_ held: HeldDrop, to scene: Scene) {
        var fields = held.event
        let chosen = (fields.removeValue(forKey: "sessions")?.arrayValue ?? []).compactMap(\.stringValue).map(SessionID.init)
        var activities: [Activity] = []
        for item in fields["items"]?.arrayValue ?? [] {
            guard let activity = try? Activity(json: item, field: "items") else { continue }
            activities.append(activity)
        }
        let operation = fields["operation"] ?? "copy"
        var windows: [JSONValue] = []
        do throws(PanesError) {
            let pending = zip(activities, chosen).filter { !scenes.isLive($0.1) && !heldElsewhere($0.1) }
            try checkHeldWindows(pending.map { ($0.0, sessions[$0.1]) }, owner: scene.owner)
            for (activity, id) in pending {
                let existing = sessions[id].flatMap { $0.owner == scene.owner ? $0 : nil }
                windows.append(try openWindow(for: activity, reopening: existing, owner: scene.owner,
                                              clientVersion: scene.clientVersion, drag: held.drag.rawValue, held: held.key))
            }
        } catch {
            logger.notice("a held drop's new windows could not be opened; its items go to the dropping window",
                          metadata: ["drag": "\(held.drag)", "error": "\(error.code.rawValue)"])
            send(.event(ServerEvent("itemsDropped", fields)), to: scene.connection)
            releaseHeldDrop(held.key)
            return
        }
        guard !windows.isEmpty else {
            // Every window it asked for is live: it was opened, and its connect let go of the row.
            releaseHeldDrop(held.key)
            return
        }
        logger.notice("a drop onto the new-window zone whose windows never opened is sent to its window again",
                      metadata: ["drag": "\(held.drag)", "session": "\(held.session)"])
        send(.event(ServerEvent("openWindows", ["drag": .string(held.drag.rawValue), "operation": operation,
                                                "windows": .array(windows)])), to: scene.connection)
    }

    /// Refuses held windows that cannot all be opened: an activity no configuration accepts, or
    /// more new sessions than the user has room for (`maxSessionsPerUser`). Checked before any
    /// is made. A session that still exists is reopened and needs no room.
    private func checkHeldWindows(_ windows: [(Activity, SceneSession?)], owner: OwnerKey) throws(PanesError) {
        let made = windows.filter { $0.1 == nil }
        for (activity, _) in made where !configurations.contains(where: { $0.accepts(activity.activityType) }) {
            throw PanesError(.unsupportedActivity, "no scene configuration accepts `\(activity.activityType)`")
        }
        guard sessions.count(of: owner) + made.count <= settings.maxSessionsPerUser else {
            throw PanesError(.tooMany, "\(owner)'s sessions are full (`maxSessionsPerUser`)")
        }
    }
}
