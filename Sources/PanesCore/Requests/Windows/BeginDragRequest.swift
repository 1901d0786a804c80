/// `beginDrag`: the server holds the dragged items; the browser carries only the drag's id.
struct BeginDragRequest: Request {
    static let type = "beginDrag"
    /// Takes an `idempotencyKey`: without one, a retry would begin a second drag.
    static var idempotency: Idempotency { .recorded }
    let items: [DragItem]

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        guard let list = try fields.array("items") else { throw .missing("items") }
        guard !list.isEmpty else { throw .invalid("items", "must hold at least one item") }
        guard list.count <= settings.maxDragItems else {
            throw PanesError(.tooMany, "a drag carries at most \(settings.maxDragItems) items (setting `maxDragItems`)",
                             field: "items")
        }
        items = try list.enumerated().map { index, entry throws(PanesError) in
            try DragItem(json: entry, field: "items[\(index)]", settings: settings)
        }
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        hub.beginDrag(items, from: hub.scene(context.scene))
    }
}
