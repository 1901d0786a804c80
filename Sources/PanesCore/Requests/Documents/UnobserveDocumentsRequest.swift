/// `unobserveDocuments`: stops `documentsChanged` for this scene.
struct UnobserveDocumentsRequest: Request {
    static let type = "unobserveDocuments"

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {}

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        let workspace = hub.scene(context.scene).owner.workspace
        hub.documents.unobserve(context.scene, in: workspace)
        return [:]
    }
}
