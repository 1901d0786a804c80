// Threading: like the rest of the store, called on the store thread only, between batches.
public import PanesCore
internal import PanesJSON

extension SQLiteStore {
    /// One document for opening: its record, snapshot, and the logged operations after
    /// the snapshot's revision `- retention`, oldest first; nil when there is no such document.
    ///
    /// - Throws: `SQLiteError`, and `DocumentLoadError` when a logged operation or the applied
    ///   op ids cannot be read back: a document whose history is damaged is refused rather than
    ///   opened wrong (`AppliedStreams.stored`: opened forgetting, a resent edit is applied twice).
    public func loadDocument(_ id: DocumentID, retention: Int) throws -> StoredDocument? {
        // One read transaction, so the log and the snapshot come from the same commit.
        try connection.run("BEGIN")
        defer { try? connection.run("COMMIT") }
        var found: StoredDocument?
        var failure: DocumentLoadError?
        try connection.forEachRow(SQL.document, [.text(id.rawValue)]) { row in
            var applied = AppliedStreams()
            do throws(PanesError) {
                applied = try AppliedStreams.stored(row.text(at: 11) ?? "[]")
            } catch {
                failure = DocumentLoadError(document: id, revision: nil, problem: error.message)
            }
            found = StoredDocument(record: DocumentRecord(row: row), snapshotRevision: row.int64(at: 9),
                                   snapshotText: row.text(at: 10) ?? "", operations: [], applied: applied)
        }
        if let failure { throw failure }
        guard var document = found else { return nil }
        let after = document.snapshotRevision - Int64(retention)
        try connection.forEachRow(SQL.operations, [.text(id.rawValue), .int(after)]) { row in
            let revision = row.int64(at: 0)
            do throws(PanesError) {
                guard case .success(let json) = JSONCodec.decode(row.text(at: 1) ?? "") else {
                    throw PanesError(.invalidOperation, "not JSON")
                }
                document.operations.append(StoredOperation(
                    revision: revision, operation: try TextOperation(json: json), opId: row.text(at: 2) ?? "",
                    author: DocumentAuthor(scene: row.text(at: 3) ?? "", user: row.text(at: 4) ?? "",
                                           name: row.text(at: 5) ?? ""),
                    createdAt: row.int64(at: 6)))
            } catch {
                failure = failure ?? DocumentLoadError(document: id, revision: revision, problem: error.message)
            }
        }
        if let failure { throw failure }
        return document
    }

    private enum SQL {
        static let document = """
            SELECT d.id, d.workspace, d.title, d.kind, d.created_at, d.created_by, d.modified_at, d.revision, d.length,
                   s.revision, s.text, s.applied
            FROM documents AS d JOIN document_snapshots AS s ON s.document = d.id WHERE d.id = ?1
            """
        static let operations = """
            SELECT revision, operation, op_id, author_scene, author_user, author_name, created_at
            FROM document_operations WHERE document = ?1 AND revision > ?2 ORDER BY revision
            """
    }
}

/// A logged operation, or a snapshot's applied op ids, that could not be read back.
public struct DocumentLoadError: Error, Sendable, CustomStringConvertible {
    public var document: DocumentID
    /// The logged operation's; nil for the snapshot's applied op ids.
    public var revision: Int64?
    public var problem: String

    public var description: String {
        guard let revision else { return "document \(document), applied op ids: \(problem)" }
        return "document \(document), operation \(revision): \(problem)"
    }
}
