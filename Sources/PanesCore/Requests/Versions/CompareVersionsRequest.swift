/// `compareVersions`: the operation that turns one version's text into the other's.
struct CompareVersionsRequest: Request {
    static let type = "compareVersions"
    let document: DocumentID
    let from: String
    let to: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        from = try VersionFields.version(fields, "from")
        to = try VersionFields.version(fields, "to")
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.readVersions(document, .compare(from: from, to: to), context, request: Self.type)
    }
}
