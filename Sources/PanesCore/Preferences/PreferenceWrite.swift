/// A `setPreference` or `removePreference` waiting for its domain's next commit.
struct PreferenceWrite: Sendable {
    let context: RequestContext
    let kind: DomainKind
    let key: KeyPath
    /// nil removes the key.
    let value: JSONValue?
    let ifVersion: Int64?

    var type: String { value == nil ? RemovePreferenceRequest.type : SetPreferenceRequest.type }
}

/// How a write fared when its batch was checked: each is answered once the batch's commit is.
enum PreferenceOutcome: Sendable {
    case failed(PanesError)
    /// Set to the value it already had, or removed when absent: nothing to store or tell.
    case unchanged(version: Int64)
    /// Takes the domain to `version`; `old` is the value readers saw before.
    case changed(version: Int64, old: JSONValue?)
}
