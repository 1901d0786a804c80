/// `removePreference`: removes a value (readers see the default again), optionally
/// compare-and-set on the key's version.
struct RemovePreferenceRequest: Request {
    static let type = "removePreference"
    /// Takes an `idempotencyKey`: without one, a retry would remove again, or fail its compare-and-set on its own first attempt.
    static var idempotency: Idempotency { .recordedByCommit }
    let kind: DomainKind
    let keyPath: KeyPath
    let ifVersion: Int64?

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        kind = try DomainKind.read(fields)
        keyPath = try KeyPath.read(fields)
        ifVersion = try fields.int("ifVersion", in: 0...Int64.max)
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.requestPreferenceChange(kind, keyPath, to: nil, ifVersion: ifVersion, context)
    }
}
