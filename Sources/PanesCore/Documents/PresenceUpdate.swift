/// What a `setPresence` asks to change. A field that is absent keeps its current value;
/// `selection: null` hides the selection.
public struct PresenceUpdate: Sendable, Equatable {
    /// The revision `selection` was made on; nil means the document's current revision.
    public var revision: Int64?
    /// `.some(nil)` hides the selection; nil leaves it as it is.
    public var selection: Selection??
    public var name: String?
    public var color: String?

    public init(revision: Int64? = nil, selection: Selection?? = nil, name: String? = nil, color: String? = nil) {
        self.revision = revision
        self.selection = selection
        self.name = name
        self.color = color
    }

    /// Largest display name and colour, in UTF-8 bytes.
    static let maxNameBytes = 64
    static let maxColorBytes = 32

    /// Reads `revision`, `selection`, `name` and `color` from a `setPresence` request.
    init(_ fields: FieldReader) throws(PanesError) {
        revision = try fields.int("revision", in: 0...DocumentFields.maxRevision)
        if let value = fields.value("selection") {
            selection = .some(try Selection(json: value))
        } else if fields.object.keys.contains("selection") {
            selection = .some(nil)  // an explicit null
        }
        name = try fields.string("name", maxLength: Self.maxNameBytes)
        color = try fields.string("color", maxLength: Self.maxColorBytes)
    }
}
