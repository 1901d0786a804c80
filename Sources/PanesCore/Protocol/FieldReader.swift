/// Reads typed fields from a JSON object and names the exact field in every error, so a
/// client sees `items[1].activity.activityType is required`, not "bad request".
public struct FieldReader: Sendable {
    public let object: JSONObject
    /// Path to this object within the request, e.g. `session` or `items[1]`; empty at top level.
    public let prefix: String

    public init(_ object: JSONObject, prefix: String = "") {
        self.object = object
        self.prefix = prefix
    }

    public func path(_ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    /// A value that is present and not `null`. Absent and `null` mean the same: not given.
    public func value(_ key: String) -> JSONValue? {
        switch object[key] {
        case nil, .null?: nil
        case let value?: value
        }
    }

    /// A value that is present, `null` included: for the fields where `null` is a value and
    /// differs from leaving the field out (a preference's value).
    public func present(_ key: String) -> JSONValue? { object[key] }

    public func required(_ key: String) throws(PanesError) -> JSONValue {
        guard let value = value(key) else { throw .missing(path(key)) }
        return value
    }

    public func string(_ key: String, maxLength: Int = 1024) throws(PanesError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let string) = value else { throw .invalid(path(key), "must be a string, not \(value.typeName)") }
        guard string.utf8.count <= maxLength else {
            throw .invalid(path(key), "is longer than \(maxLength) bytes")
        }
        return string
    }

    public func requiredString(_ key: String, maxLength: Int = 1024) throws(PanesError) -> String {
        guard let string = try string(key, maxLength: maxLength) else { throw .missing(path(key)) }
        return string
    }

    public func int(_ key: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(PanesError) -> Int64? {
        guard let value = value(key) else { return nil }
        guard let int = value.intValue else { throw .invalid(path(key), "must be an integer, not \(value.typeName)") }
        guard range.contains(int) else {
            throw .invalid(path(key), "must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return int
    }

    public func requiredInt(_ key: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(PanesError) -> Int64 {
        guard let int = try int(key, in: range) else { throw .missing(path(key)) }
        return int
    }

    public func bool(_ key: String) throws(PanesError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let bool) = value else { throw .invalid(path(key), "must be true or false, not \(value.typeName)") }
        return bool
    }

    public func object(_ key: String) throws(PanesError) -> JSONObject? {
        guard let value = value(key) else { return nil }
        guard case .object(let object) = value else { throw .invalid(path(key), "must be an object, not \(value.typeName)") }
        return object
    }

    public func reader(_ key: String) throws(PanesError) -> FieldReader? {
        try object(key).map { FieldReader($0, prefix: path(key)) }
    }

    public func array(_ key: String) throws(PanesError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let array) = value else { throw .invalid(path(key), "must be an array, not \(value.typeName)") }
        return array
    }

    /// A string that must be one of an enumeration's raw values.
    public func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) throws(PanesError) -> T?
    where T.RawValue == String {
        guard let string = try string(key, maxLength: 64) else { return nil }
        guard let choice = T(rawValue: string) else {
            let allowed = T.allCases.map { "`\($0.rawValue)`" }.joined(separator: ", ")
            throw .invalid(path(key), "must be one of \(allowed), not `\(string)`")
        }
        return choice
    }

    /// Refuses the object's first key (in byte order) that is none of `known` byte for byte,
    /// naming it; `what` says what a key is here ("a configuration key"). Fields are read by
    /// their bytes, so a key canonically equal to a known one but spelled otherwise (KELVIN
    /// SIGN for `K`) would never be read: it is unknown (CONCEPTS.md, invariant 10), and the
    /// error says which characters are not ASCII, since it looks like the known one.
    public func refuseUnknownKeys(_ known: Set<Identifier>, what: String) throws(PanesError) {
        guard let unknown = object.keys.first(where: { !known.contains(Identifier($0)) }) else { return }
        let list = known.sorted().map(\.rawValue).joined(separator: ", ")
        throw .invalid(path(unknown), "is not \(what)\(Self.nonASCII(unknown)) (known: \(list))")
    }

    /// Empty for an ASCII name; else, for an error message, the characters that are not ASCII
    /// (`, which holds U+212A KELVIN SIGN`): a name that looks like a known one but is not.
    public static func nonASCII(_ name: String) -> String {
        let scalars = name.unicodeScalars.filter { !$0.isASCII }
        guard !scalars.isEmpty else { return "" }
        let listed = scalars.prefix(4).map { scalar in
            let code = String(scalar.value, radix: 16, uppercase: true)
            let name = scalar.properties.name.map { " \($0)" } ?? ""
            return "U+\(String(repeating: "0", count: max(0, 4 - code.count)))\(code)\(name)"
        }
        return ", which holds \(listed.joined(separator: ", "))\(scalars.count > 4 ? ", …" : "")"
    }

    /// An activity object, or nil when absent.
    public func activity(_ key: String) throws(PanesError) -> Activity? {
        guard let value = value(key) else { return nil }
        return try Activity(json: value, field: path(key))
    }
}
