/// A workspace document's identifier: `doc_` and 96 random bits, hex. Opaque to clients, and
/// not a credential: access is decided by the scene's workspace, never by knowing the id.
/// Compared by its bytes (`ByteIdentifier`).
public struct DocumentID: ByteIdentifier, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}
