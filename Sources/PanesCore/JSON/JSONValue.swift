/// A JSON value as the core sees it: plain Swift, so the core never touches a C parser.
///
/// Integers and reals stay apart (jansson keeps them apart too), so a version number read
/// from the wire comes back exactly. Objects are dictionaries: key order carries no meaning
/// in the protocol, and encoders sort keys for stable output.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The JSON type name used in error messages and registered-default types.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    /// An integer, also when written as a real with no fraction (JavaScript sends `3.0` as `3`,
    /// but other clients may not).
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.007_199_254_740_992e15: return Int64(d)
        default: return nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { o[key] } else { nil }
    }

    /// Equality as a client means it: `1` and `1.0` are the same number.
    public func sameValue(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.int, .double), (.double, .int): return doubleValue == other.doubleValue
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.sameValue(as: $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { value.sameValue(as: $0) } ?? false }
        default: return self == other
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        // Sized once: growing a dictionary key by key rehashes it at every doubling, and every
        // reply the server sends is built of these.
        var object = [String: JSONValue](minimumCapacity: elements.count)
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

// Deliberately not ExpressibleByNilLiteral: `nil` in an object literal must mean "leave the
// key out" (see `object(_:)`), never a JSON null, which is always spelled `.null`.
extension JSONValue {
    /// Builds an object, leaving out keys whose value is nil, so optional fields stay absent
    /// on the wire instead of turning into `null`.
    public static func object(_ pairs: KeyValuePairs<String, JSONValue?>) -> JSONValue {
        var object = [String: JSONValue](minimumCapacity: pairs.count)  // sized once, as a literal is
        for (key, value) in pairs { if let value { object[key] = value } }
        return .object(object)
    }

    public init(_ string: String?) { self = string.map(JSONValue.string) ?? .null }
    public init(_ int: Int) { self = .int(Int64(int)) }
}
