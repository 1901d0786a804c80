/// `listDocumentShares`: the document's grants and links (never their tokens). Owners only.
struct ListDocumentSharesRequest: Request {
    static let type = "listDocumentShares"
    let document: DocumentID

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let scene = hub.scene(context.scene)
        let record = try hub.record(document, for: scene)
        try hub.requireRole(.owner, scene, record, to: "list its shares")
        return hub.sharesJSON(document)
    }
}
