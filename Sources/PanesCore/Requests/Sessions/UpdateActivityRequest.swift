/// `updateActivity`: saves the window's restoration activity (or clears it with null), with
/// the metadata that decides later whether it is handed back.
struct UpdateActivityRequest: Request {
    static let type = "updateActivity"
    /// nil clears the restoration activity: `activity: null` and an absent field differ.
    let activity: Activity?

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        guard fields.object.keys.contains("activity") else { throw .missing("activity") }
        activity = try MessageDecoder.checkedActivity(fields, "activity", settings: settings)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let scene = hub.scene(context.scene)
        var session = hub.sessions[scene.session]!
        let metadata = hub.restorationMetadata(for: scene)
        let previousTitle = session.restoration?.activity.title
        session.restoration = activity.map { Restoration(activity: $0, metadata: metadata) }
        session.lastActiveAt = hub.now()
        hub.store(session)
        if session.restoration?.activity.title != previousTitle { hub.sessionsChanged(for: scene.owner) }
        return .object(["savedAt": .int(metadata.savedAt), "metadata": activity == nil ? nil : metadata.json])
    }
}
