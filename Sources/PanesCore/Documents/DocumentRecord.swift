/// What is known about a document without its text: the sidebar's row and the stored
/// `documents` row. Every document's record stays in memory (a few hundred bytes each), so
/// lists and access checks never wait for the store; the text is loaded only when opened.
public struct DocumentRecord: Sendable, Equatable {
    public let id: DocumentID
    /// The workspace it belongs to; scenes of other workspaces never see it.
    public let workspace: String
    public var title: String
    /// Always `text` for now; kept so other kinds can be added without a new table.
    public var kind: String
    public let createdAt: Millis
    /// The user id of its creator.
    public let createdBy: String
    /// When its text last changed (creation counts; a rename does not).
    public var modifiedAt: Millis
    /// The number of operations applied since creation; the text at creation is revision 0.
    public var revision: Int64
    /// Its length in Unicode scalars.
    public var length: Int

    /// Whether it belongs to `workspace`, compared by bytes (`Identifier`).
    public func belongs(to workspace: String) -> Bool { Identifier.equal(self.workspace, workspace) }

    public init(id: DocumentID, workspace: String, title: String, kind: String = "text", createdAt: Millis,
                createdBy: String, modifiedAt: Millis, revision: Int64 = 0, length: Int = 0) {
        self.id = id
        self.workspace = workspace
        self.title = title
        self.kind = kind
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.modifiedAt = modifiedAt
        self.revision = revision
        self.length = length
    }

    /// The wire form of a summary (PROTOCOL.md, "observeDocuments").
    /// - Parameter participants: the scenes that have it open, as `DocumentParticipant.summaryJSON`.
    /// - Parameters:
    ///   - participants: the listed ones (at most `maxListedParticipants`);
    ///   - count: how many have it open in all.
    ///   - people: the participants merged per person (`DocumentState.people`).
    func json(participants: [JSONValue], count: Int? = nil, people: [JSONValue] = []) -> JSONValue {
        [
            "participantCount": JSONValue(count ?? participants.count),
            "id": .string(id.rawValue), "title": .string(title), "kind": .string(kind),
            "length": JSONValue(length), "revision": .int(revision),
            "createdAt": .int(createdAt), "modifiedAt": .int(modifiedAt), "createdBy": .string(createdBy),
            "participants": .array(participants), "people": .array(people),
        ]
    }
}
