/// Preference requests (key-value observation over the wire). See PROTOCOL.md, "Preferences".
public enum PreferenceRequest: Sendable, Equatable {
    case placeholder

    public var type: String { "" }

    static func decode(type: String, _ fields: FieldReader, _ decoder: MessageDecoder) throws(PanesError) -> PreferenceRequest? {
        nil
    }
}
