/// The workspace documents the hub knows: every document's record, the open ones in full,
/// and who is watching the list.
///
/// Memory model: records of all documents stay (small: the sidebar's data); a document's text
/// and log are held only while some scene has it open (`open`), and are dropped as soon as the
/// last one closes it or ends. Opening a document that is not held loads it from the store
/// off the service thread (`loading`), so the hub never blocks on a read.
///
/// Its tables are private: callers read records and held documents, and change them through
/// the methods below, which keep the indexes (by workspace, by scene) consistent with them.
/// Changes to a held document or a record are made in place (`updateOpen`, `updateRecord`):
/// a copy taken out and written back would copy the document's text and log on its first
/// change, on every edit.
struct DocumentState: Sendable {
    /// Every document's record.
    private(set) var records: [DocumentID: DocumentRecord] = [:]
    private var byWorkspace: [Identifier: Set<DocumentID>] = [:]
    /// Documents held in memory; each has at least one participant.
    private(set) var open: [DocumentID: OpenDocument] = [:]
    /// Documents being read from the store, with the `openDocument` requests waiting for them.
    /// One load per document, however many scenes ask.
    private var loading: [DocumentID: [PendingOpen]] = [:]
    /// The documents each scene has open, so a scene's end finds them without a scan.
    private var openedBy: [SceneID: Set<DocumentID>] = [:]
    /// Scenes observing the document list, per workspace.
    private var observers: [Identifier: Set<SceneID>] = [:]
    /// Documents whose text changed and the list is still to hear of (`DocumentAnnouncements`).
    private var announcements = DocumentAnnouncements()
    /// When held presences may be sent (`presenceIntervalMs`).
    private var presenceDeadlines = DeadlineQueue<PresenceKey>()
    /// Each document's people on other nodes, as each node last told (`Hub+RemotePeople.swift`):
    /// summaries count a person's windows on every node.
    private var remotePeople: [DocumentID: [NodeID: [PersonTally]]] = [:]

    /// The records loaded at start; no text is held until a document is opened.
    init(stored: [DocumentRecord] = []) {
        for record in stored { insert(record) }
    }

    /// Documents stored, held in memory, and being loaded.
    var counts: (stored: Int, loaded: Int, loading: Int) { (records.count, open.count, loading.count) }

    // MARK: Records

    /// Adds a new document's record.
    mutating func insert(_ record: DocumentRecord) {
        records[record.id] = record
        byWorkspace[record.workspace, default: []].insert(record.id)
    }

    /// Changes a document's record in place (its workspace stays); nil when there is none.
    @discardableResult
    mutating func updateRecord<R>(_ id: DocumentID, _ body: (inout DocumentRecord) -> R) -> R? {
        guard let index = records.index(forKey: id) else { return nil }
        return body(&records.values[index])
    }

    /// The workspace's records, in no particular order.
    func records(in workspace: String) -> [DocumentRecord] {
        (byWorkspace[workspace] ?? []).compactMap { records[$0] }
    }

    /// How many documents the workspace has.
    func count(in workspace: String) -> Int { byWorkspace[workspace]?.count ?? 0 }

    /// Forgets a document entirely, with the opens waiting for its load (returned, for them to
    /// be answered); the load stays in flight, and its result is dropped when it comes.
    mutating func remove(_ id: DocumentID) -> [PendingOpen] {
        let opens = loading.removeValue(forKey: id) ?? []
        guard let record = records.removeValue(forKey: id) else { return opens }
        byWorkspace[record.workspace]?.remove(id)
        if byWorkspace[record.workspace]?.isEmpty == true { byWorkspace[record.workspace] = nil }
        if let document = open.removeValue(forKey: id) {
            for scene in document.participants.keys { forgetOpened(id, by: scene) }
        }
        announcements.forget(id)
        remotePeople[id] = nil
        return opens
    }

    // MARK: Held documents

    /// Holds a document read from the store; its record follows its text.
    mutating func hold(_ document: OpenDocument) {
        open[document.id] = document
    }

    /// Changes a held document in place; nil when it is not held.
    @discardableResult
    mutating func updateOpen<R, E: Error>(_ id: DocumentID, _ body: (inout OpenDocument) throws(E) -> R) throws(E) -> R? {
        guard let index = open.index(forKey: id) else { return nil }
        return try body(&open.values[index])
    }

    /// Makes the record say the held document's revision and length; `modifiedAt` moves it
    /// (never back).
    mutating func recordFollowsText(_ id: DocumentID, modifiedAt: Millis? = nil) {
        guard let document = open[id] else { return }
        updateRecord(id) { record in
            record.revision = document.revision
            record.length = document.length
            if let modifiedAt { record.modifiedAt = max(record.modifiedAt, modifiedAt) }
        }
    }

    /// Drops a held document's text and log; false if it was not held.
    mutating func evict(_ id: DocumentID) -> Bool {
        open.removeValue(forKey: id) != nil
    }

    // MARK: Participants

    /// Adds the scene to a held document (it must not be in it already).
    mutating func join(_ id: DocumentID, _ participant: DocumentParticipant) {
        updateOpen(id) { document in
            document.participants[participant.scene] = participant
            document.joins += 1
        }
        openedBy[participant.scene, default: []].insert(id)
    }

    /// Takes the scene out of the document; returns its participant, nil if it was not in it.
    mutating func leave(_ id: DocumentID, scene: SceneID) -> DocumentParticipant? {
        forgetOpened(id, by: scene)
        return updateOpen(id) { $0.participants.removeValue(forKey: scene) } ?? nil
    }

    /// Changes the scene's participant in place; nil when the scene is not in the document.
    @discardableResult
    mutating func updateParticipant<R>(_ scene: SceneID, in id: DocumentID, _ body: (inout DocumentParticipant) -> R) -> R? {
        updateOpen(id) { document -> R? in
            guard let index = document.participants.index(forKey: scene) else { return nil }
            return body(&document.participants.values[index])
        } ?? nil
    }

    /// The documents the scene has open, in order.
    func opened(by scene: SceneID) -> [DocumentID] { (openedBy[scene] ?? []).sorted() }

    private mutating func forgetOpened(_ id: DocumentID, by scene: SceneID) {
        openedBy[scene]?.remove(id)
        if openedBy[scene]?.isEmpty == true { openedBy[scene] = nil }
    }

    // MARK: Loading

    /// Queues a request behind the document's load.
    /// - Returns: whether it is the first, which starts the load.
    mutating func waitForLoad(_ id: DocumentID, _ pending: PendingOpen) -> Bool {
        guard let index = loading.index(forKey: id) else {
            loading[id] = [pending]
            return true
        }
        loading.values[index].append(pending)
        return false
    }

    /// The requests that waited for the document's load, which ended; nil if none was on its way.
    mutating func loadEnded(_ id: DocumentID) -> [PendingOpen]? {
        loading.removeValue(forKey: id)
    }

    /// The scene ended: it no longer waits for any load.
    mutating func stopWaiting(_ scene: SceneID) {
        for (id, waiting) in loading where waiting.contains(where: { $0.scene == scene }) {
            loading[id] = waiting.filter { $0.scene != scene }
        }
    }

    // MARK: List observers

    /// The scene hears `documentsChanged` for its workspace from now on.
    mutating func observe(_ scene: SceneID, in workspace: String) {
        observers[workspace, default: []].insert(scene)
    }

    /// The scene stops hearing `documentsChanged` (it asked, or it ended).
    mutating func unobserve(_ scene: SceneID, in workspace: String) {
        observers[workspace]?.remove(scene)
        if observers[workspace]?.isEmpty == true { observers[workspace] = nil }
    }

    /// The scenes observing the workspace's list.
    func observers(in workspace: String) -> Set<SceneID> { observers[workspace] ?? [] }

    // MARK: Announcements and presence

    /// Notes that the document's text changed (`DocumentAnnouncements.modified`).
    mutating func modified(_ id: DocumentID, preview: JSONValue?, now: Millis, interval: Millis) {
        announcements.modified(id, preview: preview, now: now, interval: interval)
    }

    /// The modified documents due to be announced, with their latest preview.
    mutating func dueAnnouncements(now: Millis) -> [(id: DocumentID, preview: JSONValue?)] {
        announcements.popDue(now: now)
    }

    /// Holds a scene's presence until `at`.
    mutating func holdPresence(_ key: PresenceKey, until at: Millis) {
        presenceDeadlines.push(key, at: at)
    }

    /// The held presences whose interval ended.
    mutating func duePresences(now: Millis) -> [PresenceKey] {
        presenceDeadlines.popDue(now: now).map(\.key)
    }

    /// The next time an announcement or a held presence is due.
    var nextDeadlines: (announcement: Millis?, presence: Millis?) {
        (announcements.nextDeadline, presenceDeadlines.nextDeadline)
    }

    /// Keeps what another node last told of its people in the document.
    /// - Returns: whether it changed.
    mutating func setRemotePeople(_ people: [PersonTally], of id: DocumentID, on node: NodeID) -> Bool {
        guard remotePeople[id]?[node] ?? [] != people else { return false }
        remotePeople[id, default: [:]][node] = people.isEmpty ? nil : people
        if remotePeople[id]?.isEmpty == true { remotePeople[id] = nil }
        return true
    }

    /// Forgets the people of dead nodes.
    /// - Returns: the documents whose people changed, in order.
    mutating func dropRemotePeople(of nodes: Set<NodeID>) -> [DocumentID] {
        var changed: [DocumentID] = []
        for id in remotePeople.keys.sorted() {
            guard remotePeople[id]?.keys.contains(where: nodes.contains) == true else { continue }
            for node in nodes { remotePeople[id]?[node] = nil }
            if remotePeople[id]?.isEmpty == true { remotePeople[id] = nil }
            changed.append(id)
        }
        return changed
    }

    /// Forgets every other node's people (this node asks them again).
    /// - Returns: the documents whose people changed, in order.
    mutating func dropAllRemotePeople() -> [DocumentID] {
        defer { remotePeople = [:] }
        return remotePeople.keys.sorted()
    }

    // MARK: Summaries
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
