/// Folding a document's changes into one event: what an outbox does when it first claims a
/// `document.changed` delivery, in the same transaction, so the event's id, range and body are
/// fixed before any attempt and every retry sends the same.
public enum WebhookCoalescing {
    /// The delivery `head` will be, and the rows (by `seq`) it absorbs: the unbroken run of
    /// document changes right after it (same endpoint and ordering key, in order) that happened
    /// within `coalesceMs` of it. Nothing folds into a delivery already attempted, across an
    /// event of another type (a rename between two changes keeps them apart), or when
    /// `coalesceMs` is 0.
    public static func fold(_ head: WebhookDelivery, _ following: [WebhookDelivery], coalesceMs: Int64)
        -> (delivery: WebhookDelivery, absorbed: [Int64]) {
        guard coalesceMs > 0, head.event.type.coalesces, head.attempts == 0, var range = head.event.revisions else {
            return (head, [])
        }
        var merged = head
        var absorbed: [Int64] = []
        for next in following {
            guard next.event.type.coalesces, next.attempts == 0, next.seq > head.seq,
                  next.event.createdAt - head.event.createdAt <= coalesceMs,
                  let revisions = next.event.revisions else { break }
            range = min(range.lowerBound, revisions.lowerBound)...max(range.upperBound, revisions.upperBound)
            // The latest change's fields (title, length…) describe the document as it now is.
            merged.event.data = next.event.data
            merged.changes += next.changes
            absorbed.append(next.seq)
        }
        merged.event.revisions = range
        return (merged, absorbed)
    }
}
