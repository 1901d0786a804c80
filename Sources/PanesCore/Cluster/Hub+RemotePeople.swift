/// Who has a document open on every node, for summaries' `people` and `participantCount`.
/// Each node tells the others its own people in a document (`NodeSignal.Kind.people`: every
/// person with their windows and active windows there, whole each time) whenever they change;
/// a node merges what the others last told with its own. A node that starts or lost its
/// listening connection asks (`scenesWanted`) and is told again; a dead node's count goes with
/// its lease. Presence shows nobody a document they may not see: summaries go only to list
/// observers who may see the document (`announce`).
extension Hub {
    /// Tells the other nodes this node's people in the document, if they changed since last
    /// told. `sharedPeople` follows every change, for the answers to `scenesWanted`; while no
    /// other node is known alive (`Hub+Peers.swift`) the signal waits in `peopleToShare`.
    mutating func signalPeople(of id: DocumentID) {
        let people = documents.open[id].map { DocumentState.people($0.orderedParticipants, limit: settings.maxListedParticipants) } ?? []
        let told = cluster.sharedPeople[id]
        guard people != told ?? [] else { return }
        cluster.sharedPeople[id] = people.isEmpty ? nil : people
        guard hasPeers else {
            // Held back only while there is something to tell: its people here, or a list told
            // to a node before (what it was when first held back), which the empty one
            // replaces. Else a node alone for good held every document ever opened here.
            if cluster.peopleToShare.insert(id).inserted {
                if told != nil { cluster.peopleToldBeforeHeld.insert(id) }
            } else if people.isEmpty, !cluster.peopleToldBeforeHeld.contains(id) {
                cluster.peopleToShare.remove(id)
            }
            return
        }
        signal(.people(Self.peopleJSON(id, people)), to: nil)
    }

    /// The first node known after none: each document whose people changed meanwhile, to all.
    mutating func sharePeopleHeldBack() {
        let held = cluster.peopleToShare
        cluster.peopleToShare = []
        cluster.peopleToldBeforeHeld = []
        for id in held.sorted() {
            signal(.people(Self.peopleJSON(id, cluster.sharedPeople[id] ?? [])), to: nil)
        }
    }

    /// Tells one node (that asked, `scenesWanted`, and forgot what it held of the others)
    /// every document's people here, or all nodes (`to: nil`, after this node's listening
    /// connection was back: a node may have asked meanwhile). One list per document with
    /// people here; `sharedPeople` is what was last told to all, kept up to date at each change.
    mutating func sharePeople(to asker: NodeID?) {
        guard asker != nil || hasPeers else { return }
        // Told to all now, or to the one node known, which forgot what it held: nothing is
        // held back after this.
        if asker == nil || cluster.peers == Set([asker].compactMap { $0 }) {
            cluster.peopleToShare = []
            cluster.peopleToldBeforeHeld = []
        }
        for (id, people) in cluster.sharedPeople.sorted(by: { $0.key < $1.key }) {
            signal(.people(Self.peopleJSON(id, people)), to: asker)
        }
    }

    /// Before asking (`scenesWanted`): the other nodes' people are dropped, as their scenes
    /// are (`forgetRemoteScenes`), since an empty list missed meanwhile is never told again.
    mutating func forgetRemotePeople() {
        for id in documents.dropAllRemotePeople() {
            if let workspace = documents.records[id]?.workspace { announce(.presence, id, workspace: workspace) }
        }
    }

    static func peopleJSON(_ id: DocumentID, _ people: [PersonTally]) -> JSONValue {
        ["document": .string(id.rawValue), "people": .array(people.map(\.json))]
    }

    /// Another node's people in a document: kept, and the list observers here told.
    mutating func takeRemotePeople(_ json: JSONValue, from origin: NodeID) {
        guard let id = json["document"]?.stringValue.map(DocumentID.init), let entries = json["people"]?.arrayValue,
              documents.records[id] != nil, !cluster.expired.contains(origin) else { return }
        let people = Array(entries.compactMap(PersonTally.init(json:)).prefix(settings.maxListedParticipants))
        guard documents.setRemotePeople(people, of: id, on: origin) else { return }
        if let workspace = documents.records[id]?.workspace { announce(.presence, id, workspace: workspace) }
    }

    /// Dead nodes' windows leave every document's count.
    mutating func dropPeople(of nodes: Set<NodeID>) {
        for id in documents.dropRemotePeople(of: nodes) {
            if let workspace = documents.records[id]?.workspace { announce(.presence, id, workspace: workspace) }
        }
    }
}
