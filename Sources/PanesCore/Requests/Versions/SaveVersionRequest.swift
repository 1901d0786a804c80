/// `saveVersion`: keeps the document's text now as a named version.
struct SaveVersionRequest: Request {
    static let type = "saveVersion"
    /// Takes an `idempotencyKey`: without one, a retry would keep a second version.
    static var idempotency: Idempotency { .recorded }
    let document: DocumentID
    let name: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        name = try VersionFields.name(fields, settings: settings)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.saveVersion(document, name: name, context)
    }
}
