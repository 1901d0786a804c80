extension TextOperation {
    /// One operation with the effect of applying `self` and then `other`.
    ///
    /// - Throws: `.invalidOperation` when `other` does not span the document `self` produces.
    public func compose(_ other: TextOperation) throws(PanesError) -> TextOperation {
        guard targetLength == other.baseLength else {
            throw PanesError(.invalidOperation,
                             "cannot compose: the first operation produces \(targetLength) scalars "
                                 + "but the second spans \(other.baseLength)",
                             field: "operation")
        }
        var result = TextOperation()
        var first = ComponentReader(self)
        var second = ComponentReader(other)
        while true {
            // Deletes of the first and inserts of the second touch nothing of the other side.
            if case .delete? = first.head, let piece = first.take() {
                result.append(piece)
                continue
            }
            if case .insert? = second.head, let piece = second.take() {
                result.append(piece)
                continue
            }
            // Equal lengths mean both run out together.
            guard let head1 = first.head, let head2 = second.head else { break }
            let count = min(head1.length, head2.length)
            switch (first.take(count), second.take(count)) {
            case (.retain, .retain): result.retain(count)
            case (.retain, .delete): result.delete(count)
            case (.insert(let text, _), .retain): result.insert(text, scalarCount: count)
            case (.insert, .delete): break  // inserted, then deleted again: nothing left
            case (.delete, _), (_, .insert): preconditionFailure("handled above")
            }
        }
        return result
    }
}
