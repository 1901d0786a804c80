extension TextOperation {
    /// The text after the operation: one pass over `text`'s scalars, into a string whose
    /// capacity is reserved up front.
    ///
    /// - Throws: `.invalidOperation` when `text` is not `baseLength` scalars long.
    public func apply(to text: String) throws(PanesError) -> String {
        let scalars = text.unicodeScalars
        var position = scalars.startIndex
        var result = String()
        result.reserveCapacity(text.utf8.count + insertedUTF8Count)
        for component in components {
            switch component {
            case .retain(let count):
                guard let end = scalars.index(position, offsetBy: count, limitedBy: scalars.endIndex) else {
                    throw lengthMismatch(text)
                }
                // Slice the scalar view, not the string: a string slice would round the bounds
                // to whole characters and take a combining mark with its base.
                result.append(contentsOf: Substring(scalars[position..<end]))
                position = end
            case .delete(let count):
                guard let end = scalars.index(position, offsetBy: count, limitedBy: scalars.endIndex) else {
                    throw lengthMismatch(text)
                }
                position = end
            case .insert(let inserted):
                result.append(inserted)
            }
        }
        guard position == scalars.endIndex else { throw lengthMismatch(text) }
        return result
    }

    private var insertedUTF8Count: Int {
        components.reduce(0) { sum, component in
            if case .insert(let text) = component { sum + text.utf8.count } else { sum }
        }
    }

    /// Counts the document only on this failure path, so `apply` stays one pass.
    private func lengthMismatch(_ text: String) -> PanesError {
        PanesError(.invalidOperation,
                   "the operation spans \(baseLength) Unicode scalars but the document has \(text.unicodeScalars.count)",
                   field: "operation")
    }
}
