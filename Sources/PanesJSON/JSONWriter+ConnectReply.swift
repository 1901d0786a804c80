import PanesCore

/// A `connect` reply written from its parts (`ConnectReply`), with no `JSONValue` tree: the
/// bytes `write(message.json)` writes for it, keys in jansson's order (sorted by their UTF-8
/// bytes), which here is the order of the lines below. `JSONWriterConnectReplyTests` checks
/// the two agree for every optional part present and absent.
extension JSONWriter {
    /// A message: a `connect` reply from its parts, any other through its tree.
    mutating func write(_ message: ServerMessage) {
        guard case .connected(let id, let reply) = message else { return write(message.json) }
        write(connected: id, reply)
    }

    /// `{"ok":true,"re":…,"result":{…},"type":"reply"}`.
    mutating func write(connected id: RequestID, _ reply: ConnectReply) {
        put(#"{"ok":true,"re":"#)
        write(id.json)
        put(#","result":{"auth":{"expiresAt":"#)
        if let expiresAt = reply.identity.expiresAt { write(expiresAt) } else { put("null") }
        put(#"},"connectionOptions":{"userActivities":["#)
        for (index, activity) in reply.handedOver.enumerated() {
            if index > 0 { put(UInt8(ascii: ",")) }
            write(activity.json)
        }
        put(#"]},"created":"#)
        put(reply.created ? "true" : "false")
        if let forkedFrom = reply.forkedFrom {
            put(#","forkedFrom":"#)
            write(forkedFrom.bytes)
        }
        write(limits: reply.constants)
        put(#","restoration":{"status":"#)
        write(reply.restoration.rawValue)
        put(#"},"scene":"#)
        write(reply.scene.bytes)
        put(#","server":{"protocol":"#)
        write(Int64(reply.constants.protocolVersion))
        put(#","version":"#)
        write(reply.constants.serverVersion)
        put(#"},"session":"#)
        write(session: reply.session, secret: reply.secret, handBack: reply.handsBack)
        put(#","traits":{"pointer":"#)
        write(reply.traits.pointer.rawValue)
        put(#","width":"#)
        write(reply.traits.width.rawValue)
        put(#"},"user":{"id":"#)
        write(reply.identity.user)
        put(#","name":"#)
        write(reply.identity.name)
        put(#","role":"#)
        write(reply.identity.role.rawValue)
        put(#"},"workspace":"#)
        write(reply.session.owner.workspace)
        put(#"},"type":"reply"}"#)
    }

    /// `,"limits":{…}`.
    private mutating func write(limits constants: ConnectReply.Constants) {
        put(#","limits":{"maxActivityBytes":"#)
        write(Int64(constants.maxActivityBytes))
        put(#","maxMessageBytes":"#)
        write(Int64(constants.maxMessageBytes))
        put(#","maxUserInfoBytes":"#)
        write(Int64(constants.maxUserInfoBytes))
        put(#","rateLimitPerSecond":"#)
        write(Int64(constants.rateLimitPerSecond))
        put(UInt8(ascii: "}"))
    }

    /// `SceneSession.json(secret:handBack:)`, with the secret always present.
    private mutating func write(session: SceneSession, secret: String, handBack: Bool) {
        put(#"{"configuration":"#)
        write(session.configuration)
        put(#","createdAt":"#)
        write(session.createdAt)
        put(#","lastActiveAt":"#)
        write(session.lastActiveAt)
        put(#","persistentIdentifier":"#)
        write(session.id.bytes)
        let restoration = handBack ? session.restoration : nil
        if let restoration {
            put(#","restorationMetadata":"#)
            write(restoration.metadata.json)
        }
        put(#","role":"#)
        write(session.role.rawValue)
        put(#","secret":"#)
        write(secret)
        if let snapshot = session.snapshot {
            put(#","snapshot":"#)
            write(snapshot)
        }
        put(#","stateRestorationActivity":"#)
        if let restoration { write(restoration.activity.json) } else { put("null") }
        put(#","subtitle":"#)
        write(session.subtitle)
        put(#","title":"#)
        write(session.title)
        put(#","userInfo":"#)
        write(JSONValue.object(session.userInfo))
        put(UInt8(ascii: "}"))
    }
}
