/// `renameDocument`: a new title; list observers and the switcher follow it.
struct RenameDocumentRequest: Request {
    static let type = "renameDocument"
    /// Takes an `idempotencyKey`: without one, a retry would rename again over a later rename.
    static var idempotency: Idempotency { .recorded }
    let document: DocumentID
    let title: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        title = try DocumentFields.title(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.renameDocument(document, title: title, scene: hub.scene(context.scene))
    }
}
