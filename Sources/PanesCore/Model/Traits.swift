/// What a scene reports about its window (size classes and idiom), so the client can pick a
/// split view or a stacked navigation and the server can log what kinds of windows it serves.
public struct Traits: Sendable, Equatable {
    public enum Width: String, Sendable, CaseIterable { case compact, regular }
    public enum Pointer: String, Sendable, CaseIterable { case fine, coarse }

    public var width: Width
    public var pointer: Pointer

    public init(width: Width = .regular, pointer: Pointer = .fine) {
        self.width = width
        self.pointer = pointer
    }

    /// Reads a `traits` object; absent fields keep their defaults.
    init(_ fields: FieldReader) throws(PanesError) {
        width = try fields.choice("width", Width.self) ?? .regular
        pointer = try fields.choice("pointer", Pointer.self) ?? .fine
    }

    public var json: JSONValue { ["width": .string(width.rawValue), "pointer": .string(pointer.rawValue)] }
}
