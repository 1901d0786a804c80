/// `openDocument`: joins a document, loading it if no scene has it open; with `revision`, a
/// reconnecting client is caught up with the operations it missed.
struct OpenDocumentRequest: Request {
    static let type = "openDocument"
    let document: DocumentID
    /// The revision the client has, when re-opening after a reconnect.
    let revision: Int64?

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        revision = try fields.int("revision", in: 0...DocumentFields.maxRevision)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.openDocument(document, revision: revision, requestID: context.id, scene: hub.scene(context.scene))
    }
}
