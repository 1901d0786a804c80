/// A workspace document's identifier: `doc_` and 96 random bits, hex. Opaque to clients, and
/// not a credential: access is decided by the scene's workspace, never by knowing the id.
public struct DocumentID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { rawValue }
}
