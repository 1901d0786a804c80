extension TextOperation {
    /// The largest retain, delete or insert a component may carry, so every client language
    /// holds it as a plain 32-bit integer.
    public static let maxComponentLength = Int(Int32.max)

    /// Reads the wire form, `[retain n | "insert" | -delete n, …]`, accepting non-canonical
    /// input (two retains in a row, a delete before an insert) and normalising it.
    ///
    /// Decoding cannot know the document, so it does not check that the operation spans it;
    /// `apply(to:)` does.
    ///
    /// - Parameter field: the request field the operation came in, for error messages.
    /// - Throws: `.invalidOperation` naming the component that is not a non-zero integer within
    ///   ±`maxComponentLength` or a non-empty string.
    public init(json: JSONValue, field: String = "operation") throws(PanesError) {
        guard case .array(let elements) = json else {
            throw PanesError(.invalidOperation, "`\(field)` must be an array of components, not \(json.typeName)",
                             field: field)
        }
        self.init()
        for (index, element) in elements.enumerated() {
            // Spelled only for an error: interpolating it for every component cost an allocation each.
            var path: String { "`\(field)[\(index)]`" }
            switch element {
            case .string(let text):
                guard !text.isEmpty else {
                    throw PanesError(.invalidOperation, "\(path) is an empty string; an insert needs text", field: field)
                }
                insert(text)
            case .int, .double:
                if case .double(let real) = element, real.rounded() != real {
                    throw PanesError(.invalidOperation, "\(path) is \(real), not a whole number", field: field)
                }
                guard let number = element.intValue, number.magnitude <= UInt64(Self.maxComponentLength) else {
                    let shown = element.intValue.map { "\($0)" } ?? "\(element.doubleValue ?? 0)"
                    throw PanesError(.invalidOperation,
                                     "\(path) is \(shown), beyond the largest length \(Self.maxComponentLength)",
                                     field: field)
                }
                guard number != 0 else {
                    throw PanesError(.invalidOperation,
                                     "\(path) is 0; use n > 0 to retain, -n to delete, or a string to insert",
                                     field: field)
                }
                if number > 0 { retain(Int(number)) } else { delete(Int(-number)) }
            default:
                throw PanesError(.invalidOperation,
                                 "\(path) must be an integer or a string, not \(element.typeName)", field: field)
            }
        }
    }

    /// The wire form: retains as positive integers, deletes as negative ones, inserts as strings.
    public var json: JSONValue {
        .array(components.map { component in
            switch component {
            case .retain(let count): .int(Int64(count))
            case .delete(let count): .int(-Int64(count))
            case .insert(let text): .string(text)
            }
        })
    }
}

extension TextOperation {
    /// The size in bytes of the wire form, `json`'s encoding, computed without building it:
    /// what the operation costs to store and to send.
    public var encodedSize: Int {
        components.reduce(2 + max(components.count - 1, 0)) { size, component in
            switch component {
            case .retain(let count): size + Self.digits(count)
            case .delete(let count): size + 1 + Self.digits(count)
            case .insert(let text): size + JSONValue.encodedSize(of: text)
            }
        }
    }

    private static func digits(_ number: Int) -> Int {
        var digits = 1
        var rest = number
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }
}
