/// `observe`: key-value observation of a key or a subtree, with `initial`, `new` and `old`.
struct ObserveRequest: Request {
    static let type = "observe"
    let kind: DomainKind
    let keyPath: KeyPath
    let options: ObservationOptions

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        var options: ObservationOptions = [.new]
        if let list = try fields.array("options") {
            options = []
            for (index, entry) in list.enumerated() {
                guard let name = entry.stringValue, let option = ObservationOptions(name: name) else {
                    throw .invalid("options[\(index)]", "must be `initial`, `new` or `old`")
                }
                options.insert(option)
            }
        }
        self.options = options
        kind = try DomainKind.read(fields)
        keyPath = try KeyPath.read(fields)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.observe(kind, keyPath, options, scene: hub.scene(context.scene))
    }
}
