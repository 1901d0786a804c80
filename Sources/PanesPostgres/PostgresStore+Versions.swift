// Threading: like the rest of the store, called on the store thread only.
public import PanesCore

/// Document versions (`StoreCommand.saveVersion`): each row holds the version's text, so a
/// version is read without the operation log, by any node. They go with their document (the
/// foreign key's ON DELETE CASCADE).
extension PostgresStore {
    /// Sends the version's insert (if its document is stored) and the prune of checkpoints, in
    /// the batch's transaction.
    func saveVersion(_ version: VersionRecord, text: Rope, keepCheckpoints: Int) throws {
        let document = PostgresValue.text(version.document.rawValue)
        try connection.send(SQL.insert, [
            document, .text(version.id), .text(version.kind.rawValue), .int(version.revision),
            version.name.map { .text($0) } ?? .null, .int(version.createdAt), .text(version.createdBy),
            .int(Int64(version.length)), .bytes(Array(String(text).utf8)),
        ])
        if version.kind == .checkpoint {
            try connection.send(SQL.pruneCheckpoints, [document, .int(Int64(keepCheckpoints))])
        }
    }

    public func loadVersions(_ document: DocumentID) throws -> [VersionRecord] {
        let rows = try connection.query(SQL.list, [.text(document.rawValue)])
        return (0..<rows.count).map { Self.version(rows, $0, document) }
    }

    public func loadVersion(_ document: DocumentID, id: String) throws -> (VersionRecord, String)? {
        // COLLATE "C" columns: ids from clients are matched by their bytes.
        let rows = try connection.query(SQL.one, [.text(document.rawValue), .text(id)])
        guard rows.count > 0 else { return nil }
        return (Self.version(rows, 0, document), String(decoding: rows.bytes(0, 7) ?? [], as: UTF8.self))
    }

    private static func version(_ rows: PostgresRows, _ row: Int, _ document: DocumentID) -> VersionRecord {
        VersionRecord(id: rows.text(row, 0) ?? "", document: document,
                      kind: VersionRecord.Kind(rawValue: rows.text(row, 1) ?? "") ?? .checkpoint,
                      revision: rows.int64(row, 2), name: rows.isNull(row, 3) ? nil : rows.text(row, 3),
                      createdAt: rows.int64(row, 4), createdBy: rows.text(row, 5) ?? "", length: Int(rows.int64(row, 6)))
    }

    private enum SQL {
        static let insert = """
            INSERT INTO document_versions (document, id, kind, revision, name, created_at, created_by, length, text)
            SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 WHERE EXISTS (SELECT 1 FROM documents WHERE id = $1)
            """
        static let pruneCheckpoints = """
            DELETE FROM document_versions WHERE document = $1 AND kind = 'checkpoint' AND seq NOT IN (
                SELECT seq FROM document_versions WHERE document = $1 AND kind = 'checkpoint'
                ORDER BY seq DESC LIMIT $2)
            """
        static let columns = "id, kind, revision, name, created_at, created_by, length"
        static let list = "SELECT \(columns) FROM document_versions WHERE document = $1 ORDER BY seq DESC"
        static let one = "SELECT \(columns), text FROM document_versions WHERE document = $1 AND id = $2"
    }
}
