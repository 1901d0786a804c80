/// `readVersion`: one version's record and its text.
struct ReadVersionRequest: Request {
    static let type = "readVersion"
    let document: DocumentID
    let version: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        version = try VersionFields.version(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.readVersions(document, .text(version: version), context, request: Self.type)
    }
}
