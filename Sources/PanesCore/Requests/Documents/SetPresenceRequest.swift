/// `setPresence`: the scene's selection, display name and colour in a document.
struct SetPresenceRequest: Request {
    static let type = "setPresence"
    let document: DocumentID
    let update: PresenceUpdate

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        update = try PresenceUpdate(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.setPresence(document, update, scene: hub.scene(context.scene))
    }
}
