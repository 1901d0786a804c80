// Threading: like the rest of the store, called on the store thread only, between batches.
public import PanesCore

/// Document versions (`StoreCommand.saveVersion`): each row holds the version's text, so a
/// version is read without the operation log. They go with their document (ON DELETE CASCADE).
extension SQLiteStore {
    /// Stores the version if its document is stored, then prunes the document's checkpoints.
    func saveVersion(_ version: VersionRecord, text: Rope, keepCheckpoints: Int) throws(SQLiteError) {
        let document = SQLiteValue.text(version.document.rawValue)
        // Read out of the rope here, on the store thread, not by the hub.
        try connection.run(SQL.insert, [
            document, .text(version.id), .text(version.kind.rawValue), .int(version.revision),
            version.name.map { .text($0) } ?? .null, .int(version.createdAt), .text(version.createdBy),
            .int(Int64(version.length)), .text(String(text)),
        ])
        if version.kind == .checkpoint {
            try connection.run(SQL.pruneCheckpoints, [document, .int(Int64(keepCheckpoints))])
        }
    }

    public func loadVersions(_ document: DocumentID) throws -> [VersionRecord] {
        var versions: [VersionRecord] = []
        try connection.forEachRow(SQL.list, [.text(document.rawValue)]) { row in
            versions.append(Self.version(row, document))
        }
        return versions
    }

    public func loadVersion(_ document: DocumentID, id: String) throws -> (VersionRecord, String)? {
        var found: (VersionRecord, String)?
        // `id = ?2` compares bytes (BINARY collation): ids from clients are matched exactly.
        try connection.forEachRow(SQL.one, [.text(document.rawValue), .text(id)]) { row in
            found = (Self.version(row, document), row.text(at: 7) ?? "")
        }
        return found
    }

    private static func version(_ row: SQLiteStatement, _ document: DocumentID) -> VersionRecord {
        VersionRecord(id: row.text(at: 0) ?? "", document: document,
                      kind: VersionRecord.Kind(rawValue: row.text(at: 1) ?? "") ?? .checkpoint,
                      revision: row.int64(at: 2), name: row.isNull(at: 3) ? nil : row.text(at: 3),
                      createdAt: row.int64(at: 4), createdBy: row.text(at: 5) ?? "", length: Int(row.int64(at: 6)))
    }

    private enum SQL {
        static let insert = """
            INSERT INTO document_versions (document, id, kind, revision, name, created_at, created_by, length, text)
            SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE EXISTS (SELECT 1 FROM documents WHERE id = ?1)
            """
        static let pruneCheckpoints = """
            DELETE FROM document_versions WHERE document = ?1 AND kind = 'checkpoint' AND rowid NOT IN (
                SELECT rowid FROM document_versions WHERE document = ?1 AND kind = 'checkpoint'
                ORDER BY rowid DESC LIMIT ?2)
            """
        static let columns = "id, kind, revision, name, created_at, created_by, length"
        static let list = "SELECT \(columns) FROM document_versions WHERE document = ?1 ORDER BY rowid DESC"
        static let one = "SELECT \(columns), text FROM document_versions WHERE document = ?1 AND id = ?2"
    }
}
