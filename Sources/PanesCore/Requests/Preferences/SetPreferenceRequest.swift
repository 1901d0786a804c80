/// `setPreference`: sets a value, optionally compare-and-set on the key's version. The reply
/// and every observer's notification follow the commit.
struct SetPreferenceRequest: Request {
    static let type = "setPreference"
    /// Takes an `idempotencyKey`: without one, a retry would set the value again, or fail its compare-and-set on its own first attempt.
    static var idempotency: Idempotency { .recordedByCommit }
    let kind: DomainKind
    let keyPath: KeyPath
    let value: JSONValue
    let ifVersion: Int64?

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        kind = try DomainKind.read(fields)
        keyPath = try KeyPath.read(fields)
        // `null` is a value like any other; only a missing `value` is missing.
        guard let value = fields.present("value") else { throw .missing("value") }
        self.value = value
        let size = value.encodedSize
        guard size <= settings.maxPreferenceValueBytes else {
            throw .tooLarge("value", size: size, limit: settings.maxPreferenceValueBytes, setting: "maxPreferenceValueBytes")
        }
        ifVersion = try fields.int("ifVersion", in: 0...Int64.max)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.requestPreferenceChange(kind, keyPath, to: value, ifVersion: ifVersion, context)
    }
}
