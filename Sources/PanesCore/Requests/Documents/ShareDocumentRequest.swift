/// `shareDocument`: gives one user a role for the document (`owner`, `editor`, `viewer`), or
/// takes it away from them (`none`); replaces what the workspace role gives them there. Only
/// the document's owners (and workspace owners) may share.
struct ShareDocumentRequest: Request {
    static let type = "shareDocument"
    let document: DocumentID
    let user: String
    let role: DocumentRole

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        user = try DocumentFields.user(fields)
        guard let role = try fields.choice("role", DocumentRole.self) else {
            throw PanesError(.missingField, "`role` is required: owner, editor, viewer or none", field: "role")
        }
        self.role = role
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.setGrant(document, user: user, role: role, scene: hub.scene(context.scene))
    }
}
