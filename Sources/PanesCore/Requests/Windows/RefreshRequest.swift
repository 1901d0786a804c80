/// `requestRefresh` (requestSceneSessionRefresh): a session's switcher title, subtitle,
/// snapshot or restoration activity changed; a live window showing it is told too.
struct RefreshRequest: Request {
    static let type = "requestRefresh"
    /// Takes an `idempotencyKey`: without one, a retry would refresh again over a later refresh.
    static var idempotency: Idempotency { .recorded }
    let session: SessionID
    let title: String?
    let subtitle: String?
    let snapshot: JSONValue?
    let activity: Activity?

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        session = SessionID(try fields.requiredString("session", maxLength: 64))
        title = try fields.string("title", maxLength: 256)
        subtitle = try fields.string("subtitle", maxLength: 256)
        if let value = fields.value("snapshot") {
            guard case .object(let object) = value, object.count == 1,
                  object["text"]?.stringValue != nil || object["image"]?.stringValue?.hasPrefix("data:image/") == true
            else {
                throw .invalid("snapshot", "must be {\"text\": string} or {\"image\": \"data:image/…\"}")
            }
            let size = value.encodedSize
            guard size <= settings.maxSnapshotBytes else {
                throw .tooLarge("snapshot", size: size, limit: settings.maxSnapshotBytes, setting: "maxSnapshotBytes")
            }
            snapshot = value
        } else {
            snapshot = nil
        }
        activity = try MessageDecoder.checkedActivity(fields, "activity", settings: settings)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.requestRefresh(self, from: hub.scene(context.scene), context: context)
    }
}
