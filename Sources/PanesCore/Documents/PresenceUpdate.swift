/// What a `setPresence` asks to change. A field that is absent keeps its current value;
/// `selection: null` hides the selection.
public struct PresenceUpdate: Sendable, Equatable {
    /// The revision `selection` was made on; nil means the document's current revision.
    public var revision: Int64?
    /// `.some(nil)` hides the selection; nil leaves it as it is.
    public var selection: Selection??
    public var name: String?
    public var color: String?
    /// The scene's own payload (any JSON, at most `maxPresenceBytes` encoded); `.some(nil)`
    /// removes it; nil leaves it as it is.
    public var data: JSONValue??

    public init(revision: Int64? = nil, selection: Selection?? = nil, name: String? = nil, color: String? = nil,
                data: JSONValue?? = nil) {
        self.revision = revision
        self.selection = selection
        self.name = name
        self.color = color
        self.data = data
    }

    /// Largest display name and colour, in UTF-8 bytes.
    static let maxNameBytes = 64
    static let maxColorBytes = 32

    /// Reads `revision`, `selection`, `name`, `color` and `data` from a `setPresence` request.
    /// - Parameter maxDataBytes: the largest `data`, encoded (setting `maxPresenceBytes`).
    init(_ fields: FieldReader, maxDataBytes: Int) throws(PanesError) {
        revision = try fields.int("revision", in: 0...DocumentFields.maxRevision)
        if let value = fields.value("selection") {
            selection = .some(try Selection(json: value))
        } else if fields.object.keys.contains("selection") {
            selection = .some(nil)  // an explicit null
        }
        name = try fields.string("name", maxLength: Self.maxNameBytes)
        color = try fields.string("color", maxLength: Self.maxColorBytes)
        if let value = fields.value("data") {
            let size = value.encodedSize
            guard size <= maxDataBytes else {
                throw .tooLarge("data", size: size, limit: maxDataBytes, setting: "maxPresenceBytes")
            }
            data = .some(value)
        } else if fields.object.keys.contains("data") {
            data = .some(nil)
        }
    }
}
