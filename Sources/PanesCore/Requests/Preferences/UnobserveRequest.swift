/// `unobserve`: ends one of the scene's observations.
struct UnobserveRequest: Request {
    static let type = "unobserve"
    let observation: Int

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        observation = Int(try fields.requiredInt("observation", in: 0...Int64(Int32.max)))
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.unobserve(observation, scene: context.scene)
        return [:]
    }
}
