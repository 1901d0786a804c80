/// `restoreVersion`: a new edit by this scene from today's text to the version's.
struct RestoreVersionRequest: Request {
    static let type = "restoreVersion"
    let document: DocumentID
    let version: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        version = try VersionFields.version(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.restoreVersion(document, version: version, context)
    }
}
