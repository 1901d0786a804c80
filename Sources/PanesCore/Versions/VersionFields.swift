/// Fields the version requests share, read and checked the same way everywhere.
enum VersionFields {
    /// A version id field (`version`, `from`, `to`): a non-empty id of at most 64 bytes.
    static func version(_ fields: FieldReader, _ key: String = "version") throws(PanesError) -> String {
        let id = try fields.requiredString(key, maxLength: 64)
        guard !id.isEmpty else { throw .invalid(key, "must not be empty") }
        return id
    }

    /// The `name` of a named version: 1 to `maxVersionNameBytes` bytes.
    static func name(_ fields: FieldReader, settings: Settings) throws(PanesError) -> String {
        guard let value = fields.value("name") else { throw .missing("name") }
        guard case .string(let name) = value else { throw .invalid("name", "must be a string, not \(value.typeName)") }
        let size = name.utf8.count
        guard size <= settings.maxVersionNameBytes else {
            throw .tooLarge("name", size: size, limit: settings.maxVersionNameBytes, setting: "maxVersionNameBytes")
        }
        guard !name.isEmpty else { throw .invalid("name", "must not be empty") }
        return name
    }
}
