/// Requests that make, bring forward and refresh windows, and drags between them.
/// See PROTOCOL.md, "Windows" and "Drag and drop".
public enum WindowRequest: Sendable, Equatable {
    case placeholder

    public var type: String { "" }

    static func decode(type: String, _ fields: FieldReader, _ decoder: MessageDecoder) throws(PanesError) -> WindowRequest? {
        nil
    }
}
