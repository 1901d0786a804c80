/// `edit`: an operation made on `revision`; the server transforms it past what was accepted
/// since, commits it, acknowledges it and sends it to the document's other scenes.
struct EditRequest: Request {
    static let type = "edit"
    let document: DocumentID
    let revision: Int64
    let operation: TextOperation
    let opId: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        revision = try fields.requiredInt("revision", in: 0...DocumentFields.maxRevision)
        let json = try fields.required("operation")
        let size = json.encodedSize
        guard size <= settings.maxOperationBytes else {
            throw .tooLarge("operation", size: size, limit: settings.maxOperationBytes, setting: "maxOperationBytes")
        }
        operation = try TextOperation(json: json)
        opId = try fields.requiredString("opId", maxLength: DocumentFields.maxOpIdBytes)
        guard !opId.isEmpty else { throw .invalid("opId", "must not be empty") }
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.edit(document, revision: revision, operation: operation, opId: opId, context)
    }
}
