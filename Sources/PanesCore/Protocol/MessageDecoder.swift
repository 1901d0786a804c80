/// Turns a parsed frame into a request, or into an error that names what was wrong.
///
/// It reads the envelope (`type`, `id`), finds the request type in `RequestRegistry`, and lets
/// that type read its own fields.
public struct MessageDecoder: Sendable {
    public var settings: Settings

    public init(settings: Settings) {
        self.settings = settings
    }

    /// The outcome for a frame that could not become a request: the error plus whatever
    /// identifier and type could be read, so the reply still names the request.
    public struct Failure: Error, Sendable {
        public let id: RequestID?
        public let type: String?
        /// `type`'s position in `Hub.requestTypes`; nil when it names no request.
        public let typeIndex: Int?
        public let error: PanesError

        init(id: RequestID?, type: String?, typeIndex: Int? = nil, error: PanesError) {
            self.id = id
            self.type = type
            self.typeIndex = typeIndex
            self.error = error
        }
    }

    public func decode(_ json: JSONValue) -> Result<ClientRequest, Failure> {
        guard case .object(let object) = json else {
            return .failure(Failure(id: nil, type: nil,
                                    error: PanesError(.invalidMessage, "a request must be a JSON object, not \(json.typeName)")))
        }
        let type = object["type"]?.stringValue
        let id = object["id"].flatMap(RequestID.init(json:))
        guard let type else {
            return .failure(Failure(id: id, type: nil, error: PanesError(.invalidMessage, "`type` must be a string", field: "type")))
        }
        guard let id else {
            return .failure(Failure(id: nil, type: type, error: PanesError(
                .invalidMessage, "`id` must be an integer or a string of at most 64 bytes", field: "id")))
        }
        guard let index = RequestRegistry.indexes[type] else {
            return .failure(Failure(id: id, type: type, error: PanesError(
                .unknownType, "no request has type `\(type.prefix(64))`", field: "type")))
        }
        let requestType = RequestRegistry.all[index]
        do throws(PanesError) {
            let key = try Self.idempotencyKey(object)
            let request = try requestType.init(FieldReader(object), settings: settings)
            guard let key, requestType.idempotency != .none else {
                return .success(ClientRequest(id: id, request: request, typeIndex: index))
            }
            let fingerprint = RequestFingerprint.of(type: type, fields: requestType.fingerprintFields(object))
            return .success(ClientRequest(id: id, request: request, key: key, fingerprint: fingerprint, typeIndex: index))
        } catch {
            return .failure(Failure(id: id, type: type, typeIndex: index, error: error))
        }
    }

    /// The envelope's `idempotencyKey`: a string of 1 to 128 bytes, or absent.
    static func idempotencyKey(_ object: JSONObject) throws(PanesError) -> RequestKey? {
        switch object["idempotencyKey"] {
        case nil, .null?:
            return nil
        case .string(let string)?:
            let size = string.utf8.count
            guard size >= 1, size <= RequestKey.maxBytes else {
                throw .invalid("idempotencyKey", "must be 1 to \(RequestKey.maxBytes) bytes, not \(size)")
            }
            return RequestKey(string)
        case let value?:
            throw .invalid("idempotencyKey", "must be a string, not \(value.typeName)")
        }
    }

    /// Reads an activity and holds it to `maxActivityBytes`.
    static func checkedActivity(_ fields: FieldReader, _ key: String, settings: Settings) throws(PanesError) -> Activity? {
        guard let value = fields.value(key) else { return nil }
        let size = value.encodedSize
        guard size <= settings.maxActivityBytes else {
            throw .tooLarge(fields.path(key), size: size, limit: settings.maxActivityBytes, setting: "maxActivityBytes")
        }
        return try Activity(json: value, field: fields.path(key))
    }

    /// Workspace and user names: short, printable, safe in logs and file names.
    /// Every resume's workspace is checked: its bytes are read from the string's buffer, each
    /// looked up in a 128-bit set, not through the `utf8` view's iterator (~250 instructions a
    /// resume, issue 27).
    static func isName(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { bytes in
            guard !bytes.isEmpty, bytes.count <= 64 else { return false }
            for byte in bytes {
                guard byte < 0x80, (byte < 0x40 ? nameBytesLow >> byte : nameBytesHigh >> (byte - 0x40)) & 1 != 0 else {
                    return false
                }
            }
            return true
        }
    }

    /// `isName`'s bytes, a bit each: `-`, `.` and `0`–`9` below 0x40; `A`–`Z`, `_`, `a`–`z` from 0x40.
    private static var nameBytesLow: UInt64 { 0x03FF_6000_0000_0000 }
    private static var nameBytesHigh: UInt64 { 0x07FF_FFFE_87FF_FFFE }
}
