/// `revokeDocumentLink`: the link opens nothing from now on, and windows that opened the
/// document through it lose what it gave at once. Owners only.
struct RevokeDocumentLinkRequest: Request {
    static let type = "revokeDocumentLink"
    let document: DocumentID
    let link: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        link = try fields.requiredString("link", maxLength: 64)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.revokeLink(document, link: link, scene: hub.scene(context.scene))
    }
}
