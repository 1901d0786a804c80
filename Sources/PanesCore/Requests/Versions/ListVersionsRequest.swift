/// `listVersions`: the document's named versions and checkpoints, newest first.
struct ListVersionsRequest: Request {
    static let type = "listVersions"
    let document: DocumentID

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.readVersions(document, .list, context, request: Self.type)
    }
}
