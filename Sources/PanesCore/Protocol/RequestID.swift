/// The client's request identifier, echoed as `re` in the reply. Integer or short string.
public enum RequestID: Hashable, Sendable {
    case int(Int64)
    case string(String)

    public var json: JSONValue {
        switch self {
        case .int(let i): .int(i)
        case .string(let s): .string(s)
        }
    }

    public init?(json: JSONValue) {
        if let int = json.intValue {
            self = .int(int)
        } else if let string = json.stringValue, string.utf8.count <= 64 {
            self = .string(string)
        } else {
            return nil
        }
    }
}
