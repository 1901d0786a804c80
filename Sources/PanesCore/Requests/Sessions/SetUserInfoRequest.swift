/// `setUserInfo`: per-window customisations kept in the session, replaced or merged.
struct SetUserInfoRequest: Request {
    static let type = "setUserInfo"
    /// Takes an `idempotencyKey`: without one, a retry would set the userInfo again over whatever a later request set.
    static var idempotency: Idempotency { .recorded }
    let userInfo: JSONObject
    let merge: Bool

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        guard let userInfo = try fields.object("userInfo") else { throw .missing("userInfo") }
        let mode = try fields.string("mode", maxLength: 16) ?? "replace"
        guard mode == "replace" || mode == "merge" else {
            throw .invalid("mode", "must be `replace` or `merge`, not `\(mode)`")
        }
        let size = JSONValue.object(userInfo).encodedSize
        guard size <= settings.maxUserInfoBytes else {
            throw .tooLarge("userInfo", size: size, limit: settings.maxUserInfoBytes, setting: "maxUserInfoBytes")
        }
        self.userInfo = userInfo
        self.merge = mode == "merge"
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let scene = hub.scene(context.scene)
        var session = hub.session(of: scene)
        // In a merge, null removes the key; in a replace, null is kept as a value. Merged in one
        // pass over both sorted objects (key by key, thousands of keys would move thousands).
        var updated = userInfo
        if merge {
            updated = session.userInfo.merging(userInfo) { _, new in new }
            if userInfo.values.contains(.null) { updated = updated.filter { userInfo[$0.key] != .null } }
        }
        let size = JSONValue.object(updated).encodedSize
        guard size <= hub.settings.maxUserInfoBytes else {
            throw .tooLarge("userInfo", size: size, limit: hub.settings.maxUserInfoBytes, setting: "maxUserInfoBytes")
        }
        session.userInfo = updated
        session.lastActiveAt = hub.now()
        hub.store(session)
        return ["userInfo": .object(updated)]
    }
}
