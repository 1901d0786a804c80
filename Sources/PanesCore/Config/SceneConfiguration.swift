/// One entry of the scene manifest (UIKit's Application Scene Manifest): which activities a
/// kind of window accepts and whether it shows anything or one piece of content.
public struct SceneConfiguration: Sendable, Equatable {
    public enum SessionRole: String, Sendable, CaseIterable {
        /// An ordinary window.
        case window
        /// An external display showing content presented from another window.
        case presenter
    }

    public enum Kind: String, Sendable, CaseIterable {
        /// Shows any content and can navigate (Safari, Pages).
        case browser
        /// Shows one piece of content (a compose window, one conversation). Deleting that content
        /// destroys the window.
        case dedicated
    }

    public var name: String
    public var role: SessionRole
    public var kind: Kind
    /// Activity types this configuration accepts; `prefix.*` matches a family, `*` anything.
    public var activityTypes: [String]

    public init(name: String, role: SessionRole = .window, kind: Kind = .browser, activityTypes: [String]) {
        self.name = name
        self.role = role
        self.kind = kind
        self.activityTypes = activityTypes
    }

    /// Whether an activity type (a client's) is one of `activityTypes`, compared by bytes
    /// (CONCEPTS.md, invariant 10): `com.example.Kiosk` does not take a type spelled with
    /// KELVIN SIGN, which `==` on `String` would call the same.
    public func accepts(_ activityType: String) -> Bool {
        activityTypes.contains { pattern in
            if pattern == "*" { return true }
            if pattern.hasSuffix(".*") { return activityType.utf8.starts(with: pattern.utf8.dropLast()) }
            return Identifier.equal(pattern, activityType)
        }
    }

    public var json: JSONValue {
        [
            "name": .string(name), "role": .string(role.rawValue), "kind": .string(kind.rawValue),
            "activityTypes": .array(activityTypes.map(JSONValue.string)),
        ]
    }

    public init(json: JSONValue, field: String) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid(field, "must be an object") }
        let fields = FieldReader(object, prefix: field)
        // A misspelt key (`activitytypes`) would otherwise be a default read silently.
        try fields.refuseUnknownKeys(["name", "role", "kind", "activityTypes"], what: "a scene configuration key")
        name = try fields.requiredString("name", maxLength: 64)
        role = try fields.choice("role", SessionRole.self) ?? .window
        kind = try fields.choice("kind", Kind.self) ?? .browser
        activityTypes = try (fields.array("activityTypes") ?? []).enumerated().map { index, value throws(PanesError) in
            guard let type = value.stringValue else { throw .invalid("\(field).activityTypes[\(index)]", "must be a string") }
            return type
        }
    }

    /// The manifest used when the configuration file declares none. The first is the default
    /// for a session created without an activity.
    public static let defaults: [SceneConfiguration] = [
        SceneConfiguration(name: "workspace", kind: .browser, activityTypes: ["panes.workspace", "panes.document"]),
        SceneConfiguration(name: "document", kind: .dedicated, activityTypes: ["panes.document.dedicated"]),
        // One version of a document, read-only, beside the live one (`Hub+Versions.swift`).
        SceneConfiguration(name: "version", kind: .dedicated, activityTypes: [Activity.versionType]),
        SceneConfiguration(name: "presenter", role: .presenter, kind: .dedicated, activityTypes: ["panes.presentation"]),
    ]
}
