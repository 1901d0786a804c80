/// `createDocumentLink`: a link with a secret token that opens the document with `role`
/// (`viewer` or `editor`) for `expiresInMs`, to any scene of the workspace that presents it
/// (`openDocument` with `link`). Owners only. The token is in this reply only: the server keeps
/// its hash. Takes an `idempotencyKey`: its record keeps the reply without the token, which a
/// retry gets again by deriving it (`DocumentRights.keyedToken`), so a retry makes no second link.
struct CreateDocumentLinkRequest: Request {
    static let type = "createDocumentLink"
    static var idempotency: Idempotency { .recorded }
    let document: DocumentID
    let role: Role
    let lifetimeMs: Int64?

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        guard let role = try fields.choice("role", Role.self) else {
            throw PanesError(.missingField, "`role` is required: viewer or editor", field: "role")
        }
        guard role != .owner else {
            throw .invalid("role", "is viewer or editor: a link cannot make owners")
        }
        self.role = role
        lifetimeMs = try fields.int("expiresInMs", in: 1_000...Int64(settings.maxLinkLifetimeMs))
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.createLink(document, role: role, lifetimeMs: lifetimeMs ?? Int64(hub.settings.defaultLinkLifetimeMs),
                           scene: hub.scene(context.scene), key: context.key)
    }

    /// Never the token.
    static func recordedResult(_ result: JSONValue) -> JSONValue {
        guard var fields = result.objectValue else { return result }
        fields["token"] = nil
        return .object(fields)
    }

    /// The token derived again for the recorded link.
    static func replayedResult(_ recorded: JSONValue, _ slot: RequestKeySlot, _ hub: Hub) -> JSONValue {
        guard var fields = recorded.objectValue, let link = recorded["link"]?["id"]?.stringValue,
              let token = hub.rights.keyedToken(slot, link: link, mac: hub.secretHasher) else { return recorded }
        fields["token"] = .string(token)
        return .object(fields)
    }
}
