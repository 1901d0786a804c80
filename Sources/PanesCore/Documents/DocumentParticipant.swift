/// A scene that has a document open, and what it shares there (presence).
struct DocumentParticipant: Sendable {
    let scene: SceneID
    let connection: ConnectionID
    let user: String
    /// The display name; the user's name until the scene sets another.
    var name: String
    var color: String?
    /// At the document's current revision: moved through every operation as it is applied.
    var selection: Selection?
    /// The scene's own payload (`setPresence`'s `data`), at most `maxPresenceBytes`.
    var data: JSONValue?
    /// Whether the scene is `foregroundActive` (the window people are using), for the
    /// summary's `people`.
    var active: Bool
    /// Whether the scene has ever called `setPresence`: others hear that it left only then.
    var shared = false
    /// When others were last told of its presence (monotonic clock), and whether a newer one
    /// waits for `presenceIntervalMs` to pass (`Hub+Presence.swift`).
    var toldAt: Millis?
    var held = false
    /// The `presence` others were last told (`Hub.tellPresence`), at the revision it was made
    /// at: told again as it was when a node asks again and nothing changed since, so the asker
    /// finds it identical to what it holds (the selection moves with every edit here, and
    /// made afresh at the current revision it would differ after any edit, one event each).
    var toldPresence: JSONValue?
    /// Opening order, so lists of participants come out the same every time.
    let joined: Int

    /// One entry of a summary's `participants`.
    var summaryJSON: JSONValue {
        .object(["scene": .string(scene.rawValue), "user": .string(user), "name": .string(name),
                 "color": color.map(JSONValue.string)])
    }

    /// The `presence` event's fields (and one entry of `openDocument`'s `presence`).
    func presenceJSON(document: DocumentID, revision: Int64, left: Bool = false) -> JSONValue {
        [
            "document": .string(document.rawValue), "revision": .int(revision), "scene": .string(scene.rawValue),
            "user": .string(user), "name": .string(name), "color": JSONValue(color),
            "selection": left ? .null : (selection?.json ?? .null), "left": .bool(left),
            "data": left ? .null : (data ?? .null),
        ]
    }
}
