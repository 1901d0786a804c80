/// `requestActivation` (requestSceneSessionActivation): bring forward the window that shows
/// the activity's content, or get a ticket for a new window ("Open in New Window").
struct ActivationRequest: Request {
    static let type = "requestActivation"
    /// Takes an `idempotencyKey`: without one, a retry would make a second session and ticket.
    static var idempotency: Idempotency { .recorded }
    let activity: Activity
    let session: SessionID?

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        guard let activity = try MessageDecoder.checkedActivity(fields, "activity", settings: settings) else {
            throw .missing("activity")
        }
        self.activity = activity
        session = try fields.string("session", maxLength: 64).map(SessionID.init)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.requestActivation(activity, session: session, from: hub.scene(context.scene))
    }
}
