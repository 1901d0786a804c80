/// The workspace documents the hub knows: every document's record, the open ones in full,
/// and who is watching the list.
///
/// Memory model: records of all documents stay (small: the sidebar's data); a document's text
/// and log are held only while some scene has it open (`open`), and are dropped as soon as the
/// last one closes it or ends. Opening a document that is not held loads it from the store
/// off the service thread (`loading`), so the hub never blocks on a read.
struct DocumentState: Sendable {
    var records: [DocumentID: DocumentRecord] = [:]
    var byWorkspace: [Identifier: Set<DocumentID>] = [:]
    /// Documents held in memory; each has at least one participant.
    var open: [DocumentID: OpenDocument] = [:]
    /// Documents being read from the store, with the `openDocument` requests waiting for them.
    /// One load per document, however many scenes ask.
    var loading: [DocumentID: [PendingOpen]] = [:]
    /// The documents each scene has open, so a scene's end finds them without a scan.
    var openedBy: [SceneID: Set<DocumentID>] = [:]
    /// Scenes observing the document list, per workspace.
    var observers: [Identifier: Set<SceneID>] = [:]
    /// Documents whose text changed since list observers and switcher entries were last told,
    /// with when they were last told (monotonic clock); announced by `documentsTick`.
    var modified: Set<DocumentID> = []
    var lastAnnounced: [DocumentID: Millis] = [:]
    /// The latest preview of each modified document, taken when it changed, so the switcher
    /// can be refreshed after the document has been evicted.
    var previews: [DocumentID: JSONValue] = [:]
    /// When each modified document may next be announced.
    var announceDeadlines = DeadlineQueue<DocumentID>()
    /// When held presences may be sent (`presenceIntervalMs`).
    var presenceDeadlines = DeadlineQueue<PresenceKey>()
    /// Each document's people on other nodes, as each node last told (`Hub+RemotePeople.swift`):
    /// summaries count a person's windows on every node.
    var remotePeople: [DocumentID: [NodeID: [PersonTally]]] = [:]

    /// The records loaded at start; no text is held until a document is opened.
    init(stored: [DocumentRecord] = []) {
        for record in stored { insert(record) }
    }

    /// Adds a new document's record.
    mutating func insert(_ record: DocumentRecord) {
        records[record.id] = record
        byWorkspace[record.workspace, default: []].insert(record.id)
    }

    /// The scene stops hearing `documentsChanged` (it asked, or it ended).
    mutating func unobserve(_ scene: SceneID, in workspace: String) {
        observers[workspace]?.remove(scene)
        if observers[workspace]?.isEmpty == true { observers[workspace] = nil }
    }

    /// Forgets a document entirely; returns its record.
    mutating func remove(_ id: DocumentID) -> DocumentRecord? {
        guard let record = records.removeValue(forKey: id) else { return nil }
        byWorkspace[record.workspace]?.remove(id)
        if byWorkspace[record.workspace]?.isEmpty == true { byWorkspace[record.workspace] = nil }
        if let document = open.removeValue(forKey: id) {
            for scene in document.participants.keys { close(id, by: scene) }
        }
        modified.remove(id)
        lastAnnounced[id] = nil
        previews[id] = nil
        remotePeople[id] = nil
        return record
    }

    /// Removes `id` from the scene's open set.
    mutating func close(_ id: DocumentID, by scene: SceneID) {
        openedBy[scene]?.remove(id)
        if openedBy[scene]?.isEmpty == true { openedBy[scene] = nil }
    }

    /// The summary's `participants`: the first `limit` scenes to have opened the document here.
    /// Capped so that every opening costs each list observer O(1) bytes, not O(participants):
    /// E editors opening a document would otherwise send O(E²) bytes to every observer.
    /// `count` and `people` count the windows on other nodes too.
    func participants(of id: DocumentID, limit: Int) -> (listed: [JSONValue], count: Int, people: [JSONValue]) {
        let remote = (remotePeople[id] ?? [:]).sorted { $0.key < $1.key }.flatMap(\.value)
        let remoteWindows = remote.reduce(0) { $0 + $1.windows }
        guard let document = open[id] else {
            return ([], remoteWindows, PersonTally.merged(remote, limit: limit).map(\.json))
        }
        let ordered = document.orderedParticipants
        let people = PersonTally.merged(Self.people(ordered, limit: limit) + remote, limit: limit)
        return (ordered.prefix(limit).map(\.summaryJSON), document.participants.count + remoteWindows, people.map(\.json))
    }

    /// The participants here merged per person, in the order each person first opened the
    /// document; `active` counts the windows in use (foregroundActive). At most `limit` people.
    static func people(_ ordered: [DocumentParticipant], limit: Int) -> [PersonTally] {
        PersonTally.merged(ordered.lazy.map { PersonTally(user: $0.user, name: $0.name, windows: 1, active: $0.active ? 1 : 0) },
                           limit: limit)
    }

    /// A summary as lists and replies show it.
    func summary(_ id: DocumentID, limit: Int) -> JSONValue {
        guard let record = records[id] else { return .null }
        let participants = participants(of: id, limit: limit)
        return record.json(participants: participants.listed, count: participants.count, people: participants.people)
    }
}

/// An `openDocument` waiting for its document to load, or a service scene's read or edit
/// (`Hub+API.swift`).
struct PendingOpen: Sendable {
    enum Purpose: Sendable {
        case open
        /// Answer with the text at `revision` (nil: the latest).
        case read
        /// Queue the edit once the document is held.
        case edit(DocumentEdit)
    }

    let scene: SceneID
    let requestID: RequestID
    let revision: Int64?
    var pending: [String] = []
    var purpose = Purpose.open
}

extension PendingOpen.Purpose {
    /// The request a failure answers.
    var request: String {
        switch self {
        case .open: "openDocument"
        case .read: "readDocument"
        case .edit: EditRequest.type
        }
    }
}
