/// `updateActivity`: saves the window's restoration activity (or clears it with null), with
/// the metadata that decides later whether it is handed back, and optionally the session's
/// switcher subtitle.
struct UpdateActivityRequest: Request {
    static let type = "updateActivity"
    /// Takes an `idempotencyKey`: without one, a retry would save the activity again over a later save.
    static var idempotency: Idempotency { .recorded }
    /// nil clears the restoration activity: `activity: null` and an absent field differ.
    let activity: Activity?
    /// nil leaves the subtitle as it is; "" clears it.
    let subtitle: String?

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        guard fields.object.keys.contains("activity") else { throw .missing("activity") }
        activity = try MessageDecoder.checkedActivity(fields, "activity", settings: settings)
        subtitle = try fields.string("subtitle", maxLength: 256)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let scene = hub.scene(context.scene)
        var session = hub.session(of: scene)
        let metadata = hub.restorationMetadata(for: scene)
        let listed = hub.switcherEntry(session)
        session.restoration = activity.map { Restoration(activity: $0, metadata: metadata) }
        if let subtitle { session.subtitle = subtitle }
        session.lastActiveAt = hub.now()
        hub.store(session)
        // Saves come often (a scroll, a selection): switchers hear only of what they show.
        if hub.switcherEntry(session) != listed { hub.sessionsChanged(for: scene.owner) }
        return .object(["savedAt": .int(metadata.savedAt), "metadata": activity == nil ? nil : metadata.json])
    }
}
