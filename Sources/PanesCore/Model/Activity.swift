/// A user activity (NSUserActivity): what a window shows or what a drag carries.
public struct Activity: Sendable, Equatable {
    /// Reverse-DNS style type, e.g. `panes.document`. Scene configurations match on it.
    public var activityType: String
    public var title: String?
    public var userInfo: JSONObject
    /// The content this activity shows, e.g. a document identifier. Activation matches on it
    /// to bring forward the window that already shows that content.
    public var targetContentIdentifier: String?

    public init(activityType: String, title: String? = nil, userInfo: JSONObject = [:],
                targetContentIdentifier: String? = nil) {
        self.activityType = activityType
        self.title = title
        self.userInfo = userInfo
        self.targetContentIdentifier = targetContentIdentifier
    }

    /// The workspace document this activity shows: the target of a `panes.document` activity
    /// or of one of its subtypes (`panes.document.dedicated`); for a version of a document
    /// (`panes.document.version`, target `document/version`), its document. Nil for other content.
    public var document: String? {
        guard activityType == "panes.document" || activityType.hasPrefix("panes.document.") else { return nil }
        guard activityType == Self.versionType, let target = targetContentIdentifier else { return targetContentIdentifier }
        return target.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
    }

    /// The activity type of a window showing one version of a document, read-only.
    public static let versionType = "panes.document.version"

    /// Whether the activity shows a version of its document rather than the document itself.
    public var showsVersion: Bool { activityType == Self.versionType }

    public var json: JSONValue {
        .object([
            "activityType": .string(activityType),
            "title": JSONValue(title),
            "userInfo": .object(userInfo),
            "targetContentIdentifier": JSONValue(targetContentIdentifier),
        ])
    }

    /// Reads an activity from the wire or the store.
    /// - Parameter field: the field name to blame in errors, e.g. `activity` or `items[2].activity`.
    public init(json: JSONValue, field: String) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid(field, "must be an object") }
        let fields = FieldReader(object, prefix: field)
        let type = try fields.requiredString("activityType", maxLength: 256)
        guard !type.isEmpty else { throw .invalid("\(field).activityType", "must not be empty") }
        self.activityType = type
        self.title = try fields.string("title", maxLength: 1024)
        self.userInfo = try fields.object("userInfo") ?? [:]
        self.targetContentIdentifier = try fields.string("targetContentIdentifier", maxLength: 256)
    }
}
