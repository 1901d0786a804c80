/// Fields that several document requests share, read and checked the same way everywhere.
enum DocumentFields {
    /// Largest title, in UTF-8 bytes.
    static let maxTitleBytes = 256
    /// Largest client op id, in UTF-8 bytes: room for a session id, a separator and a counter.
    static let maxOpIdBytes = 128
    /// Largest revision a client may name: far beyond any real document, inside JavaScript's
    /// exact integers.
    static let maxRevision: Int64 = 1 << 52

    /// The `document` field: a non-empty id of at most 64 bytes.
    static func document(_ fields: FieldReader) throws(PanesError) -> DocumentID {
        let id = try fields.requiredString("document", maxLength: 64)
        guard !id.isEmpty else { throw .invalid("document", "must not be empty") }
        return DocumentID(id)
    }

    /// The `user` field of a sharing request: a user id of 1 to 256 bytes, kept as its bytes.
    static func user(_ fields: FieldReader) throws(PanesError) -> String {
        let user = try fields.requiredString("user", maxLength: 256)
        guard !user.isEmpty else { throw .invalid("user", "must not be empty") }
        return user
    }

    /// The `title` field: 1 to `maxTitleBytes` bytes.
    static func title(_ fields: FieldReader) throws(PanesError) -> String {
        let title = try fields.requiredString("title", maxLength: maxTitleBytes)
        guard !title.isEmpty else { throw .invalid("title", "must be 1 to \(maxTitleBytes) bytes") }
        return title
    }
}
