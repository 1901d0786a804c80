import Logging

/// `updateTraits`: the window was resized across the compact/regular boundary or moved to
/// another kind of display (traitCollectionDidChange). The scene's traits follow, and the
/// user's switchers hear of it.
struct UpdateTraitsRequest: Request {
    static let type = "updateTraits"
    let traits: JSONObject

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        guard let reader = try fields.reader("traits") else { throw .missing("traits") }
        // Checked here, applied over the scene's current traits in `handle`.
        _ = try reader.choice("width", Traits.Width.self)
        _ = try reader.choice("pointer", Traits.Pointer.self)
        traits = reader.object
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        var scene = hub.scene(context.scene)
        let previous = scene.traits
        let reader = FieldReader(traits, prefix: "traits")
        scene.traits.width = try reader.choice("width", Traits.Width.self) ?? previous.width
        scene.traits.pointer = try reader.choice("pointer", Traits.Pointer.self) ?? previous.pointer
        hub.setTraits(scene.traits, of: context.scene)
        if scene.traits != previous {
            hub.logger.info("traitCollectionDidChange", metadata: [
                "scene": "\(scene.id)", "width": "\(scene.traits.width.rawValue)",
                "pointer": "\(scene.traits.pointer.rawValue)",
            ])
            hub.sessionsChanged(for: scene.owner)
        }
        return ["traits": scene.traits.json, "previous": previous.json, "changed": .bool(scene.traits != previous)]
    }
}
