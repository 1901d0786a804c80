/// A read of a document's versions, done on the store thread (`LoadRequest.versions`), with
/// the diff it needs: the hub's thread never reads a version's text or diffs one.
public struct VersionRead: Sendable, Equatable {
    public enum Query: Sendable, Equatable {
        /// Every version's record, newest first.
        case list
        /// One version's record and text.
        case text(version: String)
        /// The operation from one version's text to the other's.
        case compare(from: String, to: String)
        /// The operation from `current` (the document's text at `revision`, as the hub holds it)
        /// to the version's text.
        case restore(version: String, current: Rope, revision: Int64)
        /// How many named versions the document has, before saving another.
        case countNamed
    }

    /// Matches the result to its waiting request (`VersionState.waiting`).
    public let ticket: Int64
    public let document: DocumentID
    public let query: Query

    public init(ticket: Int64, document: DocumentID, query: Query) {
        self.ticket = ticket
        self.document = document
        self.query = query
    }

    public enum Answer: Sendable, Equatable {
        case list([VersionRecord])
        case text(VersionRecord, String)
        case compare(VersionRecord, VersionRecord, TextOperation)
        /// `newest`: the revision of the document's newest kept version (nil: none), so the
        /// hub can tell whether today's text is kept anywhere before it is replaced.
        case restore(VersionRecord, TextOperation, revision: Int64, newest: Int64?)
        case countNamed(Int)
        /// A version asked for is not among the document's; `field` names the request's field.
        case notFound(version: String, field: String)
    }

    /// Performs the read against the store.
    func perform(_ store: any Store) throws -> Answer {
        switch query {
        case .list:
            return .list(try store.loadVersions(document))
        case .countNamed:
            return .countNamed(try store.loadVersions(document).count { $0.kind == .named })
        case .text(let version):
            guard let (record, text) = try store.loadVersion(document, id: version) else {
                return .notFound(version: version, field: "version")
            }
            return .text(record, text)
        case .compare(let from, let to):
            guard let (fromRecord, fromText) = try store.loadVersion(document, id: from) else {
                return .notFound(version: from, field: "from")
            }
            guard let (toRecord, toText) = try store.loadVersion(document, id: to) else {
                return .notFound(version: to, field: "to")
            }
            return .compare(fromRecord, toRecord, TextDiff.operation(from: fromText, to: toText))
        case .restore(let version, let current, let revision):
            guard let (record, text) = try store.loadVersion(document, id: version) else {
                return .notFound(version: version, field: "version")
            }
            let newest = try store.loadVersions(document).map(\.revision).max()
            return .restore(record, TextDiff.operation(from: String(current), to: text), revision: revision, newest: newest)
        }
    }
}
