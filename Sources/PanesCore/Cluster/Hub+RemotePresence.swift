/// Presence of scenes on other nodes (their cursors and selections in a document): each node
/// tells the others its scenes' presence as it changes (`NodeSignal.Kind.presence`, `left`
/// when a scene leaves), and keeps what the others told for the document's scenes here,
/// those that open it later included. A dead node's scenes leave with its lease, a deleted
/// document's with it (`documentRemoved`).
extension Hub {
    /// Presence from a scene on another node: kept for scenes that open the document later,
    /// and passed on to the document's scenes here.
    mutating func takeRemotePresence(_ presence: JSONValue, from origin: NodeID) {
        guard let document = presence["document"]?.stringValue.map(DocumentID.init),
              let scene = presence["scene"]?.stringValue.map(SceneID.init) else { return }
        if presence["left"] == true {
            cluster.remotePresence[document]?[scene] = nil
            if cluster.remotePresence[document]?.isEmpty == true { cluster.remotePresence[document] = nil }
        } else {
            // Sent before its node's lease ran out but read after (this node's listener far
            // behind): that node's scenes have left already, and nothing would drop it again.
            // So too for a document deleted meanwhile (`documentRemoved`), as for its people:
            // one not read here yet is nobody's open document here either.
            guard !cluster.expired.contains(origin), documents.records[document] != nil else { return }
            cluster.remotePresence[document, default: [:]][scene] = (origin, presence)
        }
        let here = documents.open[document].map { $0.participants.values.map(\.connection).sorted() } ?? []
        broadcast(.event(.presence(presence)), to: here)
    }

    /// Presence of scenes on other nodes, for `openDocument`'s `presence`, at the revision
    /// the opening scene gets: a presence is kept as it came, made at its node's revision then,
    /// and the text has moved since (a scene opening now has no operations to move it by).
    func remotePresence(in document: DocumentID) -> [JSONValue] {
        let entries = (cluster.remotePresence[document] ?? [:]).sorted { $0.key < $1.key }.map(\.value.presence)
        guard let held = documents.open[document] else { return entries }
        return entries.map { Self.presence($0, movedTo: held) }
    }

    /// A presence made at an older revision, its selection moved through the operations
    /// applied since, as a local participant's is as they are applied. When the kept log does
    /// not reach back that far, or the other node is ahead of this one, the selection is only
    /// kept inside the text: it is a caret, not data.
    static func presence(_ presence: JSONValue, movedTo document: OpenDocument) -> JSONValue {
        guard var object = presence.objectValue, let revision = presence["revision"]?.intValue,
              revision != document.revision else { return presence }
        if let json = presence["selection"], json != .null, var selection = try? Selection(json: json) {
            if revision < document.revision, revision >= document.oldestBase {
                let scene = presence["scene"]?.stringValue.map(SceneID.init)
                for entry in document.operations(after: revision) {
                    selection = selection.transformed(by: entry.operation, isOwnEdit: SceneID(entry.author.scene) == scene)
                }
            }
            object["selection"] = selection.clamped(toLength: document.length).json
        }
        object["revision"] = .int(document.revision)
        return .object(object)
    }

    /// A dead node's scenes leave every document they were in.
    mutating func dropPresence(of nodes: Set<NodeID>) {
        let gone = cluster.remotePresence.values.flatMap(\.values).filter { nodes.contains($0.node) }
            .sorted { SceneID($0.presence["scene"]?.stringValue ?? "") < SceneID($1.presence["scene"]?.stringValue ?? "") }
        for entry in gone {
            var left = entry.presence.objectValue ?? [:]
            left["left"] = true
            left["selection"] = .null
            takeRemotePresence(.object(left), from: entry.node)
        }
        dropPeople(of: nodes)
    }
}
