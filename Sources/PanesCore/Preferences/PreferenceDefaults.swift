/// Registered defaults (UserDefaults' `register(defaults:)`), declared in the configuration
/// file with their types: an unset key reads as its default, and a value of another type is
/// refused.
///
/// ```json
/// "preferenceDefaults": {
///   "user": { "editor.showWordCount": { "type": "boolean", "default": false } },
///   "workspace": { "workspace.accent": { "type": "string", "default": "blue" } } }
/// ```
public struct PreferenceDefaults: Sendable, Equatable {
    public enum ValueType: String, Sendable, CaseIterable {
        case boolean, integer, number, string, array, object

        public func admits(_ value: JSONValue) -> Bool {
            switch (self, value) {
            case (.boolean, .bool), (.string, .string), (.array, .array), (.object, .object), (.number, .int),
                 (.number, .double):
                true
            case (.integer, _):
                value.intValue != nil
            default:
                false
            }
        }
    }

    public struct Registration: Sendable, Equatable {
        public var type: ValueType
        public var value: JSONValue
    }

    public var registrations: [DomainKind: [KeyPath: Registration]]

    public init(registrations: [DomainKind: [KeyPath: Registration]] = [:]) {
        self.registrations = registrations
    }

    /// What the bundled web client uses.
    public static let standard = PreferenceDefaults(registrations: [
        .user: [
            try! KeyPath("editor.showWordCount"): Registration(type: .boolean, value: false),
            try! KeyPath("editor.fontSize"): Registration(type: .integer, value: 15),
            try! KeyPath("appearance.theme"): Registration(type: .string, value: "system"),
        ],
    ])

    public func registration(_ domain: DomainKind, _ key: KeyPath) -> Registration? {
        registrations[domain]?[key]
    }

    public init(json: JSONValue) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid("preferenceDefaults", "must be an object") }
        var registrations: [DomainKind: [KeyPath: Registration]] = [:]
        for (domainName, entries) in object {
            guard let domain = DomainKind(rawValue: domainName) else {
                throw .invalid("preferenceDefaults.\(domainName)", "must be `user` or `workspace`")
            }
            guard case .object(let keys) = entries else {
                throw .invalid("preferenceDefaults.\(domainName)", "must be an object of key paths")
            }
            for (keyString, entry) in keys {
                let field = "preferenceDefaults.\(domainName).\(keyString)"
                let key = try KeyPath(keyString, field: field)
                guard case .object(let spec) = entry else { throw .invalid(field, "must be {\"type\": …, \"default\": …}") }
                let fields = FieldReader(spec, prefix: field)
                guard let type = try fields.choice("type", ValueType.self) else { throw .missing("\(field).type") }
                let value = try fields.required("default")
                guard type.admits(value) else {
                    throw .invalid("\(field).default", "is \(value.typeName), not \(type.rawValue)")
                }
                registrations[domain, default: [:]][key] = Registration(type: type, value: value)
            }
            let sorted = (registrations[domain] ?? [:]).keys.sorted()
            for (a, b) in zip(sorted, sorted.dropFirst()) where a.nests(with: b) {
                throw .invalid("preferenceDefaults.\(domainName)", "declares `\(a)` and `\(b)`, which nest")
            }
        }
        self.registrations = registrations
    }
}
