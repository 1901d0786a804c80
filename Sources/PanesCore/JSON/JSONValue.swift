/// A JSON value as the core sees it: plain Swift, so the core never touches a C parser.
///
/// Integers and reals stay apart (jansson keeps them apart too), so a version number read
/// from the wire comes back exactly. Objects are `JSONObject`s: keys compared by their bytes,
/// kept in byte order, which is the order encoders write (key order carries no meaning in the
/// protocol).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

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
    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }
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
            // Both in key byte order, so members pair up in place.
            return a.count == b.count
                && zip(a, b).allSatisfy { Identifier.equal($0.key, $1.key) && $0.value.sameValue(as: $1.value) }
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
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(literal: elements)) }
}

// Deliberately not ExpressibleByNilLiteral: `nil` in an object literal must mean "leave the
// key out" (see `object(_:)`), never a JSON null, which is always spelled `.null`.
extension JSONValue {
    /// Builds an object, leaving out keys whose value is nil, so optional fields stay absent
    /// on the wire instead of turning into `null`.
    public static func object(_ pairs: KeyValuePairs<String, JSONValue?>) -> JSONValue {
        var members: [(String, JSONValue)] = []
        members.reserveCapacity(pairs.count)  // sized once, as a literal is
        for (key, value) in pairs { if let value { members.append((key, value)) } }
        return .object(JSONObject(literal: members))
    }

    public init(_ string: String?) { self = string.map(JSONValue.string) ?? .null }
    public init(_ int: Int) { self = .int(Int64(int)) }
}
