public enum MemoryStoreError: Error {
    case injectedFailure
    /// `createDocument` for an id that is taken (SQLite: a primary key conflict).
    case documentExists(DocumentID)
    /// `appendOperation` for a document that is not stored (SQLite: a foreign key failure).
    case noSuchDocument(DocumentID)
    /// `appendOperation` at a revision already logged (SQLite: a primary key conflict).
    case revisionExists(DocumentID, Int64)
}
