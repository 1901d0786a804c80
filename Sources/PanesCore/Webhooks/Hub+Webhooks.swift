/// Webhook events from the hub's own changes: each is written to the outbox by the same store
/// write as the change it reports (`StoreCommand.enqueueWebhooks` in its persist or commit), so
/// none is lost and none reports a change that did not commit. In a cluster the node that
/// makes a change writes its event; nodes that only hear of it (`applyCommitted`, record
/// notices) write nothing, so each event is written once.
extension Hub {
    /// The command that writes an event for every endpoint that wants it; none when no
    /// endpoint does.
    func webhook(_ type: WebhookEventType, workspace: String, orderingKey: String, revisions: ClosedRange<Int64>? = nil,
                 data: JSONObject) -> [StoreCommand] {
        guard wantsWebhook(type) else { return [] }
        let event = WebhookEvent(id: ids.token("evt_"), type: type, workspace: workspace, orderingKey: orderingKey,
                                 revisions: revisions, data: .object(data), createdAt: now())
        return [.enqueueWebhooks(event.entries(for: webhookEndpoints, coalesceMs: settings.webhookCoalesceMs))]
    }

    /// Whether any endpoint wants events of `type`. The builders below ask it before they build
    /// an event's data: with no endpoint (the default) a write builds nothing for webhooks.
    func wantsWebhook(_ type: WebhookEventType) -> Bool {
        webhookEndpoints.contains { $0.wants(type) }
    }

    /// A session's event (`session.created`, `session.destroyed`, `window.spawned`), ordered with
    /// the session's other events.
    func sessionWebhook(_ type: WebhookEventType, _ session: SceneSession, extra: JSONObject = [:]) -> [StoreCommand] {
        guard wantsWebhook(type) else { return [] }
        var data: JSONObject = [
            "session": .string(session.id.rawValue), "user": .string(session.owner.user),
            "configuration": .string(session.configuration), "title": .string(session.title),
        ]
        for (key, value) in extra { data[key] = value }
        let workspace = session.owner.workspace
        return webhook(type, workspace: workspace, orderingKey: "session:\(session.id.rawValue)", data: data)
    }

    /// A preference's change, ordered with the other changes of its domain.
    func preferenceWebhook(_ domain: PreferenceDomain, key: String, value: JSONValue?, version: Int64,
                           by context: RequestContext) -> [StoreCommand] {
        guard wantsWebhook(.preferenceChanged) else { return [] }
        var data: JSONObject = ["domain": .string(domain.kind), "keyPath": .string(key), "version": .int(version),
                                         "value": value ?? .null, "removed": .bool(value == nil)]
        if let user = domain.user { data["user"] = .string(user) }
        if let scene = scenes[context.scene] {
            // An API request on a user's domain acts as that user; the event names the key.
            let user = serviceActors[context.connection] ?? scene.owner.user
            data["actor"] = ["user": .string(user), "name": .string(scene.userName)]
        }
        let orderingKey = "preferences:\(domain.workspace.utf8.count):\(domain.workspace)/\(domain.user ?? "")"
        return webhook(.preferenceChanged, workspace: domain.workspace, orderingKey: orderingKey, data: data)
    }

    /// A document's event, ordered with the document's other events.
    func documentWebhook(_ type: WebhookEventType, _ record: DocumentRecord, revisions: ClosedRange<Int64>? = nil,
                         by actor: (user: String, name: String), extra: JSONObject = [:]) -> [StoreCommand] {
        guard wantsWebhook(type) else { return [] }
        var data: JSONObject = [
            "document": .string(record.id.rawValue), "title": .string(record.title),
            "actor": ["user": .string(actor.user), "name": .string(actor.name)],
        ]
        for (key, value) in extra { data[key] = value }
        return webhook(type, workspace: record.workspace,
                       orderingKey: WebhookEvent.documentKey(workspace: record.workspace, document: record.id.rawValue),
                       revisions: revisions, data: data)
    }
}
