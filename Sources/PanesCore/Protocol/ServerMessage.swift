/// Everything the server sends: replies to requests, and events it pushes.
public enum ServerMessage: Sendable, Equatable {
    /// A successful reply: `{"type":"reply","re":ID,"ok":true,"result":{…}}`.
    case reply(RequestID, result: JSONValue)
    /// A `connect`'s successful reply, as its parts (see `ConnectReply`): the same frame as
    /// `.reply(id, result: reply.json)`, written without building the tree. The parts are held
    /// by reference (`ConnectReply` is a class): inline, their 392 bytes would make every message,
    /// and every `Effect`, that large (about 100 bytes otherwise).
    case connected(RequestID, ConnectReply)
    /// A failed reply: `{"type":"reply","re":ID,"ok":false,"error":{…}}`. `re` is null when the
    /// frame carried no readable identifier.
    case failure(RequestID?, request: String?, PanesError)
    /// A pushed event: `{"type": name, …fields}`.
    case event(ServerEvent)

    /// Whether it is a pushed event rather than a reply.
    public var isEvent: Bool { if case .event = self { true } else { false } }

    /// The request this message answers, if it is a reply.
    public var replyTo: RequestID? {
        switch self {
        case .reply(let id, _), .connected(let id, _): id
        case .failure(let id, _, _): id
        case .event: nil
        }
    }

    /// A successful reply's result; nil for a failure or an event.
    public var result: JSONValue? {
        switch self {
        case .reply(_, let result): result
        case .connected(_, let reply): reply.json
        case .failure, .event: nil
        }
    }

    public var json: JSONValue {
        switch self {
        case .reply(let id, let result):
            return ["type": "reply", "re": id.json, "ok": true, "result": result]
        case .connected(let id, let reply):
            return ["type": "reply", "re": id.json, "ok": true, "result": reply.json]
        case .failure(let id, let request, let error):
            return .object(["type": "reply", "re": id?.json ?? .null, "ok": false, "request": request.map(JSONValue.string),
                            "error": error.json])
        case .event(let event):
            var object = event.fields
            object["type"] = .string(event.name)
            return .object(object)
        }
    }
}

/// A pushed event: its wire name and fields. Most are built through the static constructors
/// in the features' `ServerEvent+…` files; a few are still built where they are sent.
public struct ServerEvent: Sendable, Equatable {
    public let name: String
    public let fields: JSONObject

    public init(_ name: String, _ fields: JSONObject) {
        self.name = name
        self.fields = fields
    }

    /// The session is destroyed: play the animation, then close the window.
    public static func sessionDestroyed(_ session: SessionID, animation: DismissalAnimation) -> ServerEvent {
        ServerEvent("sessionDestroyed", ["session": .string(session.rawValue), "animation": .string(animation.rawValue)])
    }

    /// Another scene refreshed this scene's session (`requestRefresh`): the session's switcher
    /// entry now (`entry`, as `listSessions` lists it), and the new restoration activity when
    /// the refresh replaced it.
    public static func sessionRefreshed(_ entry: JSONValue, activity: JSONValue?, requestedBy: Scene) -> ServerEvent {
        sessionRefreshed(entry, activity: activity, requester: Self.requester(requestedBy))
    }

    /// How events name the scene that asked for something: `{"scene", "session"}`.
    static func requester(_ scene: Scene) -> JSONValue {
        ["scene": .string(scene.id.rawValue), "session": .string(scene.session.rawValue)]
    }

    /// `sessionRefreshed` with the requester as events name it (a scene on another node).
    public static func sessionRefreshed(_ entry: JSONValue, activity: JSONValue?, requester: JSONValue) -> ServerEvent {
        let listed = entry.objectValue ?? [:]
        let fields = JSONValue.object([
            "session": listed["persistentIdentifier"], "title": listed["title"], "subtitle": listed["subtitle"],
            "snapshot": listed["snapshot"], "activity": activity, "requestedBy": requester,
        ])
        return ServerEvent("sessionRefreshed", fields.objectValue ?? [:])
    }

    /// The switcher's list changed; carries the whole new list.
    public static func sessionsChanged(_ list: JSONValue) -> ServerEvent {
        ServerEvent("sessionsChanged", list.objectValue ?? [:])
    }

    /// The server is draining; reconnect after the delay.
    public static func goingAway(reconnectAfterMs: Int) -> ServerEvent {
        ServerEvent("goingAway", ["reconnectAfterMs": JSONValue(reconnectAfterMs), "reason": "server shutting down"])
    }
}
