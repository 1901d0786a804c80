/// `observeDocuments`: the workspace's document list; `documentsChanged` from then on.
struct ObserveDocumentsRequest: Request {
    static let type = "observeDocuments"

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {}

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        hub.observeDocuments(hub.scene(context.scene))
    }
}
