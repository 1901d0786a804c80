/// Document requests: list, create, rename, delete, open, edit, presence.
/// See PROTOCOL.md, "Documents".
public enum DocumentRequest: Sendable, Equatable {
    case placeholder

    public var type: String { "" }

    static func decode(type: String, _ fields: FieldReader, _ decoder: MessageDecoder) throws(PanesError) -> DocumentRequest? {
        nil
    }
}
