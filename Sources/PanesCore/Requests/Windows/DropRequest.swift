/// `drop`: delivers a drag onto this scene, another scene of the user, or the new-window zone.
struct DropRequest: Request {
    static let type = "drop"
    /// Takes an `idempotencyKey`: without one, a retry would find the drag ended and say so, or open the windows twice.
    static var idempotency: Idempotency { .recorded }
    let drag: String
    let target: DropTarget
    let operation: DragOperation
    let scene: SceneID?

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        drag = try fields.requiredString("drag", maxLength: 64)
        guard let target = try fields.choice("target", DropTarget.self) else { throw .missing("target") }
        self.target = target
        operation = try fields.choice("operation", DragOperation.self) ?? .copy
        scene = try fields.string("scene", maxLength: 64).map(SceneID.init)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.drop(drag, target: target, operation: operation, onto: scene, from: hub.scene(context.scene),
                     context: context)
    }
}
