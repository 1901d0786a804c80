/// `listSessions`: the switcher's list of every session of the user; with `watch`, the scene
/// hears `sessionsChanged` from then on.
struct ListSessionsRequest: Request {
    static let type = "listSessions"
    let watch: Bool

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        watch = try fields.bool("watch") ?? false
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let owner = hub.scene(context.scene).owner
        if watch {
            hub.switcher.watch(context.scene, of: owner)
        } else {
            hub.switcher.unwatch(context.scene, of: owner)
        }
        return hub.sessionList(for: owner)
    }
}
