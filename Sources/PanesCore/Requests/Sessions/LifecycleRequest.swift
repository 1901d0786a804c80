/// `lifecycle`: the window's visibility and focus, from which the scene's activation state
/// is derived (Hub+Lifecycle.swift).
struct LifecycleRequest: Request {
    static let type = "lifecycle"
    let visible: Bool
    let focused: Bool

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        guard let visible = try fields.bool("visible") else { throw .missing("visible") }
        guard let focused = try fields.bool("focused") else { throw .missing("focused") }
        self.visible = visible
        self.focused = focused
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        hub.reportLifecycle(visible: visible, focused: focused, scene: context.scene)
    }
}
