/// `createDocument`: a new workspace document with `text` as revision 0.
struct CreateDocumentRequest: Request {
    static let type = "createDocument"
    /// Takes an `idempotencyKey`: without one, a retry would make a second document.
    static var idempotency: Idempotency { .recorded }
    let title: String
    let text: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        let text = try fields.string("text", maxLength: Int.max) ?? ""
        let scalars = text.unicodeScalars.count
        guard scalars <= settings.maxDocumentScalars else {
            throw PanesError(.tooLarge, "`text` is \(scalars) Unicode scalars, over the limit of "
                                 + "\(settings.maxDocumentScalars) (setting `maxDocumentScalars`)", field: "text")
        }
        self.text = text
        title = try DocumentFields.title(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.createDocument(title: title, text: text, scene: hub.scene(context.scene))
    }
}
