/// Which preference domain a request names: the caller's own user domain, or its workspace's.
public enum DomainKind: String, Sendable, CaseIterable {
    case user, workspace

    /// Reads the `domain` field.
    static func read(_ fields: FieldReader) throws(PanesError) -> DomainKind {
        let name = try fields.requiredString("domain", maxLength: 64)
        guard let kind = DomainKind(rawValue: name) else {
            throw PanesError(.unknownDomain, "`domain` must be `user` or `workspace`, not `\(name)`", field: "domain")
        }
        return kind
    }
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

extension KeyPath {
    /// Reads the `keyPath` field.
    static func read(_ fields: FieldReader) throws(PanesError) -> KeyPath {
        try KeyPath(try fields.requiredString("keyPath", maxLength: 4096), field: "keyPath")
    }
}
