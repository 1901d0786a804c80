/// The one error type of the core: a stable code, a message for people, and, where it
/// helps, the field that was wrong and how long to wait.
public struct PanesError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var field: String?
    public var retryAfterMs: Int?

    public init(_ code: ErrorCode, _ message: String, field: String? = nil, retryAfterMs: Int? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.retryAfterMs = retryAfterMs
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The `error` object of a reply.
    public var json: JSONValue {
        .object([
            "code": .string(code.rawValue),
            "number": .int(Int64(code.number)),
            "action": .string(code.action.rawValue),
            "message": .string(message),
            "field": field.map(JSONValue.string),
            "retryAfterMs": retryAfterMs.map { JSONValue($0) },
        ])
    }

    public static func missing(_ field: String) -> PanesError {
        PanesError(.missingField, "`\(field)` is required", field: field)
    }

    public static func invalid(_ field: String, _ why: String) -> PanesError {
        PanesError(.invalidField, "`\(field)` \(why)", field: field)
    }

    public static func tooLarge(_ field: String, size: Int, limit: Int, setting: String) -> PanesError {
        PanesError(.tooLarge, "`\(field)` is \(size) bytes, over the limit of \(limit) (setting `\(setting)`)",
                   field: field)
    }
}
