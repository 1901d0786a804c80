public import PanesCore

extension AppliedStreams {
    /// A store's text of a document's applied op ids, read back: the array written today or
    /// the object form written before. Only builds that keyed streams by bytes but still wrote
    /// the object form could put two streams that are the same text in other bytes in it; they
    /// are two streams, so both are kept.
    ///
    /// Both stores refuse to open a document whose applied op ids this cannot read, rather
    /// than open it remembering none: a window whose edit's reply was lost re-opens asking
    /// whether it was applied, and a document that forgot would say no, so the window would
    /// send the edit again and it would be applied twice (CONCEPTS.md, invariants 8 and 9). A
    /// refused open is an error the operator sees in the log, naming the document.
    /// - Throws: `PanesError` saying what could not be read.
    public static func stored(_ text: String) throws(PanesError) -> AppliedStreams {
        switch JSONCodec.decode(text, acceptingEquivalentKeys: true) {
        case .success(let json): return try AppliedStreams(json: json)
        case .failure(let error): throw PanesError(.invalidField, "not JSON: \(error.description)")
        }
    }
}
