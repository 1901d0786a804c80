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

    public var json: JSONValue { ["width": .string(width.rawValue), "pointer": .string(pointer.rawValue)] }
}
