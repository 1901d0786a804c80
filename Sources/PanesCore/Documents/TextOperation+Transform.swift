extension TextOperation {
    /// Rewrites two concurrent operations so each applies after the other:
    /// `apply(apply(S, a), bPrime) == apply(apply(S, b), aPrime)` (TP1).
    ///
    /// **Tie-break: when both insert at the same position, `a`'s text comes first.**
    ///
    /// Why everyone converges: the argument order is fixed by role, not by who calls.
    /// `a` is always the operation the server has not applied yet (a client's), `b` the one
    /// already in the server's history.
    /// - The server, given client op `c` at revision `r`, rewrites it past each history entry
    ///   `h` after `r` with `c = transform(c, h).0`, then applies and broadcasts `c`.
    /// - The client that sent `c`, given `h` while `c` is unacknowledged, computes
    ///   `(c', h') = transform(c, h)` and applies `h'` to its own text.
    /// Both make the same call with the same arguments, so both place `c`'s insert before
    /// `h`'s, and TP1 for that one call makes the sender's `c` then `h'` equal the server's
    /// `h` then `c'`. Every other client only applies the server's operations in the server's
    /// order, so it ends at the server's text. (Were one side to call `transform(h, c)`, a
    /// tie would be broken one way on the server and the other way in the sender.)
    /// `web/lib/ot.js` and `web/lib/ot-client.js` follow the same convention.
    ///
    /// - Returns: `(aPrime, bPrime)`: `aPrime` applies after `b`, `bPrime` after `a`.
    /// - Throws: `.invalidOperation` when `a` and `b` do not span the same document.
    public static func transform(_ a: TextOperation, _ b: TextOperation) throws(PanesError)
        -> (TextOperation, TextOperation)
    {
        let (aPrime, bPrime) = try transform(a, b, keepingB: true)
        return (aPrime, bPrime ?? TextOperation())
    }

    /// `transform(self, b).0` alone: this operation rewritten to apply after `b`. The server's
    /// rebase of a client's operation past its history needs only that half, and skipping the
    /// other saves building an operation per history entry.
    public func transformed(past b: TextOperation) throws(PanesError) -> TextOperation {
        if baseLength == b.baseLength, let typed = insertTransformed(past: b) { return typed }
        return try Self.transform(self, b, keepingB: false).0
    }

    /// `transformed(past:)` for the commonest edit, typing: one insert (`[p, "text", q]`, no
    /// delete). Rebasing a keystroke past the history is most of a busy document's work, and
    /// its result only moves the insert, so one walk over `b` finds where: what `b` keeps or
    /// inserts before the insert's position. Same tie-break as the general algorithm: `b`'s
    /// inserts at that very position go after this one, and inside (or at the start of) text
    /// `b` deletes the insert lands where the deletion was. Nil for any other shape.
    /// Requires equal base lengths.
    private func insertTransformed(past b: TextOperation) -> TextOperation? {
        guard components.count <= 3 else { return nil }
        var position = 0
        var inserted: String?
        for component in components {
            switch component {
            case .retain(let count) where inserted == nil: position = count
            case .retain: break
            case .insert(let text):
                guard inserted == nil else { return nil }
                inserted = text
            case .delete: return nil
            }
        }
        guard let inserted else { return nil }
        var old = 0  // consumed from the base document
        var new = 0  // produced in b's target
        walk: for component in b.components {
            switch component {
            case .retain(let count):
                if old + count >= position {
                    new += position - old
                    break walk
                }
                old += count
                new += count
            case .insert(let text):
                if old == position { break walk }
                new += text.unicodeScalars.count
            case .delete(let count):
                if old + count > position { break walk }
                old += count
            }
        }
        var rebased = TextOperation()
        rebased.retain(new)
        rebased.insert(Substring(inserted), scalarCount: targetLength - baseLength)
        rebased.retain(b.targetLength - new)
        return rebased
    }

    private static func transform(_ a: TextOperation, _ b: TextOperation, keepingB: Bool) throws(PanesError)
        -> (TextOperation, TextOperation?)
    {
        guard a.baseLength == b.baseLength else {
            throw PanesError(.invalidOperation,
                             "cannot transform: the operations span \(a.baseLength) and \(b.baseLength) scalars, "
                                 + "not the same document",
                             field: "operation")
        }
        var aPrime = TextOperation()
        var bPrime: TextOperation? = keepingB ? TextOperation() : nil
        var readerA = ComponentReader(a)
        var readerB = ComponentReader(b)
        while true {
            // An insert of a is checked first: that is the tie-break.
            if case .insert(let text, let count)? = readerA.head {
                aPrime.insert(text, scalarCount: count)
                bPrime?.retain(count)
                _ = readerA.take()
                continue
            }
            if case .insert(let text, let count)? = readerB.head {
                aPrime.retain(count)
                bPrime?.insert(text, scalarCount: count)
                _ = readerB.take()
                continue
            }
            // Equal base lengths mean both run out together.
            guard let headA = readerA.head, let headB = readerB.head else { break }
            let count = min(headA.length, headB.length)
            switch (readerA.take(count), readerB.take(count)) {
            case (.retain, .retain):
                aPrime.retain(count)
                bPrime?.retain(count)
            case (.delete, .delete): break  // both removed the same text
            case (.delete, .retain): aPrime.delete(count)
            case (.retain, .delete): bPrime?.delete(count)
            case (.insert, _), (_, .insert): preconditionFailure("handled above")
            }
        }
        return (aPrime, bPrime)
    }

    /// Where a position in the document before this operation ends up after it: for cursors
    /// and selections (presence).
    ///
    /// A position inside deleted text moves to where the deletion was. Text inserted exactly
    /// at the position goes after someone else's cursor, so a remote edit never drags your
    /// caret along; but the author's own caret moves past what it typed.
    ///
    /// - Parameters:
    ///   - position: a scalar offset in the base document; clamped to `0...baseLength`.
    ///   - isOwnEdit: true when the cursor belongs to the author of this operation.
    /// - Returns: an offset in `0...targetLength`. For the same `isOwnEdit`, a larger position
    ///   never maps below a smaller one.
    public func transform(position: Int, isOwnEdit: Bool = false) -> Int {
        let position = min(max(position, 0), baseLength)
        var old = 0  // consumed from the base document
        var new = 0  // produced in the target document
        for component in components {
            switch component {
            case .retain(let count):
                if position < old + count { return new + (position - old) }
                old += count
                new += count
            case .delete(let count):
                if position < old + count { return new }
                old += count
            case .insert(let text):
                // Components before this one stopped short of the position, so old <= position.
                guard position > old || isOwnEdit else { return new }
                new += text.unicodeScalars.count
            }
        }
        return new
    }
}
