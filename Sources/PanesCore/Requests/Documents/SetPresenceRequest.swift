/// `setPresence`: the scene's selection, display name, colour and payload in a document.
struct SetPresenceRequest: Request {
    static let type = "setPresence"
    let document: DocumentID
    let update: PresenceUpdate

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        document = try DocumentFields.document(fields)
        update = try PresenceUpdate(fields, maxDataBytes: settings.maxPresenceBytes)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.setPresence(document, update, scene: hub.scene(context.scene))
    }
}
