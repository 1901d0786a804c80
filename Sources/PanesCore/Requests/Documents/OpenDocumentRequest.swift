/// `openDocument`: joins a document, loading it if no scene has it open; with `revision`, a
/// reconnecting client is caught up with the operations it missed.
struct OpenDocumentRequest: Request {
    static let type = "openDocument"
    let document: DocumentID
    /// The revision the client has, when re-opening after a reconnect.
    let revision: Int64?
    /// The op ids of the client's unacknowledged edits: a catch-up by snapshot says which of
    /// them the server applied (`applied`), so they are not sent twice.
    let pending: [String]
    /// A link's token (`createDocumentLink`): the scene opens the document with the link's role.
    let link: String?

    /// Most op ids a re-opening client may ask about (it has one in flight and one buffered).
    static let maxPending = 16

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        revision = try fields.int("revision", in: 0...DocumentFields.maxRevision)
        let list = try fields.array("pending") ?? []
        guard list.count <= Self.maxPending else {
            throw .invalid("pending", "lists at most \(Self.maxPending) op ids")
        }
        pending = try list.map { value throws(PanesError) in
            guard case .string(let id) = value, !id.isEmpty, id.utf8.count <= DocumentFields.maxOpIdBytes else {
                throw .invalid("pending", "holds op ids: strings of 1 to \(DocumentFields.maxOpIdBytes) bytes")
            }
            return id
        }
        link = try fields.string("link", maxLength: 128)
        if !pending.isEmpty, revision == nil {
            throw .invalid("pending", "goes with `revision`: the revision the pending edits were made on")
        }
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.openDocument(document, revision: revision, pending: pending, link: link, requestID: context.id,
                             scene: hub.scene(context.scene))
    }
}
