/// `requestDestruction`: closes a session's window with a dismissal animation and discards
/// the session and everything stored for it.
struct DestructionRequest: Request {
    static let type = "requestDestruction"
    /// Takes an `idempotencyKey`: without one, a retry would find the session gone and say so.
    static var idempotency: Idempotency { .recorded }
    let session: SessionID
    let animation: DismissalAnimation

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        session = SessionID(try fields.requiredString("session", maxLength: 64))
        animation = try fields.choice("animation", DismissalAnimation.self) ?? .standard
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let scene = hub.scene(context.scene)
        let target = try hub.ownedSession(session, by: scene)
        // The reply goes out once the deletion is durable and before anything else `discard`
        // sends: a scene destroying its own session gets the reply, `sessionDestroyed`, the close.
        hub.discard(target.id, animation: animation, reason: "destroyed by request",
                    reply: (context, ["session": .string(target.id.rawValue), "animation": .string(animation.rawValue)]))
        return nil
    }
}
