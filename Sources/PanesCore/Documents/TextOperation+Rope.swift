extension TextOperation {
    /// The text after the operation, as a rope: O(k log n) for k components, whatever the
    /// document's length, and `rope` itself stays as it was (they share all untouched nodes).
    ///
    /// - Throws: `.invalidOperation` when `rope` is not `baseLength` scalars long.
    public func apply(to rope: Rope) throws(PanesError) -> Rope {
        guard rope.scalarCount == baseLength else {
            throw PanesError(.invalidOperation,
                             "the operation spans \(baseLength) Unicode scalars but the document has \(rope.scalarCount)",
                             field: "operation")
        }
        var result = rope
        var position = 0  // in the text produced so far, which is also where the rest of `rope` begins
        var index = components.startIndex
        while index < components.endIndex {
            switch components[index] {
            case .retain(let count):
                position += count
            case .delete(let count):
                result.replace(position..<position + count, with: "", counted: RopeSummary())
            case .insert(let text):
                // Canonical form puts an insert before a delete at the same place: one replace.
                var deleted = 0
                if index + 1 < components.endIndex, case .delete(let count) = components[index + 1] {
                    deleted = count
                    index += 1
                }
                let inserted = RopeSummary(text)
                result.replace(position..<position + deleted, with: text, counted: inserted)
                position += inserted.scalars
            }
            index += 1
        }
        return result
    }
}
