/// `deleteDocument`: deletes the document, its log, and every reference to it.
struct DeleteDocumentRequest: Request {
    static let type = "deleteDocument"
    /// Takes an `idempotencyKey`: without one, a retry would find the document gone and say so.
    static var idempotency: Idempotency { .recorded }
    let document: DocumentID

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.deleteDocument(document, scene: hub.scene(context.scene))
    }
}
