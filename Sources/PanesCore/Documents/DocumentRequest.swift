/// Document requests: list, create, rename, delete, open, edit, presence.
/// See PROTOCOL.md, "Documents".
///
/// Decoding checks everything that needs no state: shapes, title lengths, the operation's
/// encoding and size, the initial text's size. Whether the document exists, is open, and
/// whether the operation fits it is for the hub.
public enum DocumentRequest: Sendable, Equatable {
    case observeDocuments
    case unobserveDocuments
    case createDocument(title: String, text: String)
    case renameDocument(DocumentID, title: String)
    case deleteDocument(DocumentID)
    /// `revision` is the revision the client has, when re-opening after a reconnect.
    /// `requestID` is the envelope's id: the reply may have to wait for the document to load,
    /// and then the hub answers it itself, after the request handler has returned.
    case openDocument(DocumentID, revision: Int64?, requestID: RequestID)
    case closeDocument(DocumentID)
    case edit(DocumentID, revision: Int64, operation: TextOperation, opId: String)
    case setPresence(DocumentID, PresenceUpdate)

    public var type: String {
        switch self {
        case .observeDocuments: "observeDocuments"
        case .unobserveDocuments: "unobserveDocuments"
        case .createDocument: "createDocument"
        case .renameDocument: "renameDocument"
        case .deleteDocument: "deleteDocument"
        case .openDocument: "openDocument"
        case .closeDocument: "closeDocument"
        case .edit: "edit"
        case .setPresence: "setPresence"
        }
    }

    /// Largest title, in UTF-8 bytes.
    static let maxTitleBytes = 256
    /// Largest client op id, in UTF-8 bytes: room for a session id, a separator and a counter.
    static let maxOpIdBytes = 128
    /// Largest revision a client may name: far beyond any real document, inside JavaScript's
    /// exact integers.
    static let maxRevision: Int64 = 1 << 52

    /// The request for `type`, or nil when `type` is not a document request.
    static func decode(type: String, _ fields: FieldReader, _ decoder: MessageDecoder) throws(PanesError) -> DocumentRequest? {
        switch type {
        case "observeDocuments":
            return .observeDocuments
        case "unobserveDocuments":
            return .unobserveDocuments
        case "createDocument":
            let text = try fields.string("text", maxLength: Int.max) ?? ""
            let scalars = text.unicodeScalars.count
            guard scalars <= decoder.settings.maxDocumentScalars else {
                throw PanesError(.tooLarge, "`text` is \(scalars) Unicode scalars, over the limit of "
                                     + "\(decoder.settings.maxDocumentScalars) (setting `maxDocumentScalars`)",
                                 field: "text")
            }
            return .createDocument(title: try title(fields), text: text)
        case "renameDocument":
            return .renameDocument(try document(fields), title: try title(fields))
        case "deleteDocument":
            return .deleteDocument(try document(fields))
        case "openDocument":
            // The envelope was read before this, so the id is there and valid.
            let requestID = fields.object["id"].flatMap(RequestID.init(json:)) ?? .int(0)
            return .openDocument(try document(fields), revision: try fields.int("revision", in: 0...maxRevision),
                                 requestID: requestID)
        case "closeDocument":
            return .closeDocument(try document(fields))
        case "edit":
            let document = try document(fields)
            let revision = try fields.requiredInt("revision", in: 0...maxRevision)
            let json = try fields.required("operation")
            let size = json.encodedSize
            guard size <= decoder.settings.maxOperationBytes else {
                throw .tooLarge("operation", size: size, limit: decoder.settings.maxOperationBytes,
                                setting: "maxOperationBytes")
            }
            let operation = try TextOperation(json: json)
            let opId = try fields.requiredString("opId", maxLength: maxOpIdBytes)
            guard !opId.isEmpty else { throw .invalid("opId", "must not be empty") }
            return .edit(document, revision: revision, operation: operation, opId: opId)
        case "setPresence":
            return .setPresence(try document(fields), try PresenceUpdate(fields))
        default:
            return nil
        }
    }

    /// The `document` field: a non-empty id of at most 64 bytes.
    private static func document(_ fields: FieldReader) throws(PanesError) -> DocumentID {
        let id = try fields.requiredString("document", maxLength: 64)
        guard !id.isEmpty else { throw .invalid("document", "must not be empty") }
        return DocumentID(id)
    }

    /// The `title` field: 1 to `maxTitleBytes` bytes.
    private static func title(_ fields: FieldReader) throws(PanesError) -> String {
        let title = try fields.requiredString("title", maxLength: maxTitleBytes)
        guard !title.isEmpty else { throw .invalid("title", "must be 1 to \(maxTitleBytes) bytes") }
        return title
    }
}
