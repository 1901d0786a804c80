/// `cancelDrag`: the source gives up its drag; it hears `dragEnded` like any ending.
struct CancelDragRequest: Request {
    static let type = "cancelDrag"
    /// Takes an `idempotencyKey`: without one, a retry would find the drag ended and say so.
    static var idempotency: Idempotency { .recorded }
    let drag: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        drag = try fields.requiredString("drag", maxLength: 64)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.cancelDrag(drag, from: hub.scene(context.scene), context: context)
    }
}
