/// `unshareDocument`: removes the user's grant for the document, so the workspace role holds
/// for them again. Owners only.
struct UnshareDocumentRequest: Request {
    static let type = "unshareDocument"
    let document: DocumentID
    let user: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        user = try DocumentFields.user(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.setGrant(document, user: user, role: nil, scene: hub.scene(context.scene))
    }
}
