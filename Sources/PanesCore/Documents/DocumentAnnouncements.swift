/// Documents whose text changed since list observers and switcher entries were last told,
/// announced at most every `documentListIntervalMs` per document (`Hub.documentsTick`).
struct DocumentAnnouncements: Sendable {
    private var modified: Set<DocumentID> = []
    /// When each document was last announced (monotonic clock).
    private var lastAnnounced: [DocumentID: Millis] = [:]
    /// The latest preview of each modified document, taken when it changed, so the switcher
    /// can be refreshed after the document has been evicted.
    private var previews: [DocumentID: JSONValue] = [:]
    /// When each modified document may next be announced.
    private var deadlines = DeadlineQueue<DocumentID>()

    /// Notes a change: the document is announced once its interval since the last
    /// announcement has passed. Without a preview the one kept (if any) stays.
    mutating func modified(_ id: DocumentID, preview: JSONValue?, now: Millis, interval: Millis) {
        if let preview { previews[id] = preview }
        guard modified.insert(id).inserted else { return }
        deadlines.push(id, at: max(now, (lastAnnounced[id] ?? .min) + interval))
    }

    /// The documents due now, each with its latest preview; they count as announced now.
    mutating func popDue(now: Millis) -> [(id: DocumentID, preview: JSONValue?)] {
        var due: [(id: DocumentID, preview: JSONValue?)] = []
        for (_, id) in deadlines.popDue(now: now) {
            guard modified.remove(id) != nil else { continue }
            lastAnnounced[id] = now
            due.append((id, previews.removeValue(forKey: id)))
        }
        return due
    }

    var nextDeadline: Millis? { deadlines.nextDeadline }

    /// A deleted document is never announced as modified.
    mutating func forget(_ id: DocumentID) {
        modified.remove(id)
        lastAnnounced[id] = nil
        previews[id] = nil
    }
}
