/// `closeDocument`: leaves a document; the scene's presence leaves with it.
struct CloseDocumentRequest: Request {
    static let type = "closeDocument"
    let document: DocumentID

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.closeDocument(document, scene: hub.scene(context.scene))
    }
}
