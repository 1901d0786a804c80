/// The operator's preferences (managed defaults on macOS and iOS), from the configuration
/// file's `managedPreferences`. A locked key overrides every user's and the workspace's value,
/// is reported as locked to observers, and refuses writes with `preference_locked`; an
/// unlocked one is a default that users may override.
///
/// ```json
/// "managedPreferences": {
///   "user": { "editor.fontSize": { "value": 14, "locked": true } },
///   "workspace": { "workspace.accent": { "value": "teal" } } }
/// ```
public struct ManagedPreferences: Sendable, Equatable {
    public struct Value: Sendable, Equatable {
        public var value: JSONValue
        public var locked: Bool
    }

    public var values: [DomainKind: [KeyPath: Value]]

    public init(values: [DomainKind: [KeyPath: Value]] = [:]) {
        self.values = values
    }

    func value(_ kind: DomainKind, _ key: KeyPath) -> Value? { values[kind]?[key] }

    func keys(_ kind: DomainKind) -> Dictionary<KeyPath, Value>.Keys { (values[kind] ?? [:]).keys }

    /// Reads `managedPreferences`, checking each value against the registered default's type.
    public init(json: JSONValue, defaults: PreferenceDefaults) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid("managedPreferences", "must be an object") }
        var values: [DomainKind: [KeyPath: Value]] = [:]
        for (domainName, entries) in object {
            guard let kind = DomainKind(rawValue: domainName) else {
                throw .invalid("managedPreferences.\(domainName)", "must be `user` or `workspace`")
            }
            guard case .object(let keys) = entries else {
                throw .invalid("managedPreferences.\(domainName)", "must be an object of key paths")
            }
            for (keyString, entry) in keys {
                let field = "managedPreferences.\(domainName).\(keyString)"
                let key = try KeyPath(keyString, field: field)
                guard case .object(let spec) = entry else { throw .invalid(field, "must be {\"value\": …, \"locked\": …}") }
                let fields = FieldReader(spec, prefix: field)
                try fields.refuseUnknownKeys(["value", "locked"], what: "a known field")
                let value = try fields.required("value")
                if let registration = defaults.registration(kind, key), !registration.type.admits(value) {
                    throw .invalid("\(field).value", "is \(value.typeName), but `\(key)` takes \(registration.type.rawValue) values")
                }
                values[kind, default: [:]][key] = Value(value: value, locked: try fields.bool("locked") ?? false)
            }
            let sorted = (values[kind] ?? [:]).keys.sorted()
            for (a, b) in zip(sorted, sorted.dropFirst()) where a.nests(with: b) {
                throw .invalid("managedPreferences.\(domainName)", "declares `\(a)` and `\(b)`, which nest")
            }
        }
        self.values = values
    }
}
