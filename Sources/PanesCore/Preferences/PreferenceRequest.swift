/// Preference requests (key-value observation over the wire). See PROTOCOL.md, "Preferences".
public enum PreferenceRequest: Sendable, Equatable {
    case observe(DomainKind, KeyPath, ObservationOptions)
    case unobserve(Int)
    case set(DomainKind, KeyPath, value: JSONValue, ifVersion: Int64?)
    case remove(DomainKind, KeyPath, ifVersion: Int64?)

    public var type: String {
        switch self {
        case .observe: "observe"
        case .unobserve: "unobserve"
        case .set: "setPreference"
        case .remove: "removePreference"
        }
    }

    static func decode(type: String, _ fields: FieldReader, _ decoder: MessageDecoder) throws(PanesError) -> PreferenceRequest? {
        switch type {
        case "observe":
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
            return .observe(try domain(fields), try keyPath(fields), options)
        case "unobserve":
            return .unobserve(Int(try fields.requiredInt("observation", in: 0...Int64(Int32.max))))
        case "setPreference":
            let domain = try domain(fields), keyPath = try keyPath(fields)
            let value = try fields.required("value")
            let size = value.encodedSize
            guard size <= decoder.settings.maxPreferenceValueBytes else {
                throw .tooLarge("value", size: size, limit: decoder.settings.maxPreferenceValueBytes,
                                setting: "maxPreferenceValueBytes")
            }
            return .set(domain, keyPath, value: value, ifVersion: try fields.int("ifVersion", in: 0...Int64.max))
        case "removePreference":
            return .remove(try domain(fields), try keyPath(fields), ifVersion: try fields.int("ifVersion", in: 0...Int64.max))
        default:
            return nil
        }
    }

    private static func domain(_ fields: FieldReader) throws(PanesError) -> DomainKind {
        let name = try fields.requiredString("domain", maxLength: 64)
        guard let kind = DomainKind(rawValue: name) else {
            throw PanesError(.unknownDomain, "`domain` must be `user` or `workspace`, not `\(name)`", field: "domain")
        }
        return kind
    }

    private static func keyPath(_ fields: FieldReader) throws(PanesError) -> KeyPath {
        try KeyPath(try fields.requiredString("keyPath", maxLength: 4096), field: "keyPath")
    }
}

/// Which preference domain a request names: the caller's own user domain, or its workspace's.
public enum DomainKind: String, Sendable, CaseIterable {
    case user, workspace
}

/// What an observation wants to hear (NSKeyValueObservingOptions).
public struct ObservationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The current values, sent before the reply.
    public static let initial = ObservationOptions(rawValue: 1)
    /// The value after each change.
    public static let new = ObservationOptions(rawValue: 2)
    /// The value before each change.
    public static let old = ObservationOptions(rawValue: 4)

    init?(name: String) {
        switch name {
        case "initial": self = .initial
        case "new": self = .new
        case "old": self = .old
        default: return nil
        }
    }
}
