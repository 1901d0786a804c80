/// Presence of scenes on other nodes (their cursors and selections in a document): each node
/// tells the others its scenes' presence as it changes (`NodeSignal.Kind.presence`, `left`
/// when a scene leaves), and keeps what the others told for the document's scenes here,
/// those that open it later included. A dead node's scenes leave with its lease, a deleted
/// document's with it (`documentRemoved`). A node that asks again (`scenesWanted`: at start,
/// after a rejoin, after its listening connection was back) forgets what the others told and
/// is told every presence again, to it alone, as their scenes and people are.
///
/// A presence can come before this node has read its document's record (made on another node
/// a moment ago; a scene here may open it next): it waits in `unreadPresence` for the record
/// load asked for when it came, which reads the record (a signal is never seen before the
/// writes made before it) or finds it deleted meanwhile. So it waits one record load at most,
/// and a deleted document's presence is not kept.
extension Hub {
    /// Presence from a scene on another node: kept for scenes that open the document later,
    /// and passed on to the document's scenes here.
    mutating func takeRemotePresence(_ presence: JSONValue, from origin: NodeID) {
        guard let document = presence["document"]?.stringValue.map(DocumentID.init),
              let scene = presence["scene"]?.stringValue.map(SceneID.init) else { return }
        // Anything waiting for the record is older than this.
        cluster.unreadPresence[document]?.scenes[scene] = nil
        if cluster.unreadPresence[document]?.scenes.isEmpty == true { cluster.unreadPresence[document] = nil }
        if presence["left"] == true {
            cluster.remotePresence[document]?[scene] = nil
            if cluster.remotePresence[document]?.isEmpty == true { cluster.remotePresence[document] = nil }
        } else {
            // Sent before its node's lease ran out but read after (this node's listener far
            // behind): that node's scenes have left already, and nothing would drop it again.
            guard !cluster.expired.contains(origin) else { return }
            guard documents.records[document] != nil else { return keepUntilRead(presence, document, scene, from: origin) }
            cluster.remotePresence[document, default: [:]][scene] = (origin, presence)
        }
        let here = documents.open[document].map { $0.participants.values.map(\.connection).sorted() } ?? []
        broadcast(.event(.presence(presence)), to: here)
    }

    /// A presence for a document whose record is not read here: kept until the record load
    /// asked for now (or the one after the load in flight) has finished. Dropping it, as this
    /// node did, left a scene that opened the document a moment later without that cursor
    /// until its person moved.
    private mutating func keepUntilRead(_ presence: JSONValue, _ document: DocumentID, _ scene: SceneID,
                                        from origin: NodeID) {
        guard cluster.unreadPresence[document] == nil else {
            cluster.unreadPresence[document]?.scenes[scene] = (origin, presence)
            return
        }
        cluster.unreadPresence[document] = UnreadPresence(after: cluster.recordLoadsStarted,
                                                          scenes: [scene: (origin, presence)])
        loadRecordChanges()
    }

    /// After record load number `finished` succeeded: presence whose document's record is read
    /// now is kept as any other (before the opens waiting for that record are answered), and
    /// presence whose load has finished without the record is dropped: the document was
    /// deleted, and a document never read here has no `documentRemoved` to drop it later.
    mutating func settleUnreadPresence(readBy finished: Int) {
        for (id, unread) in cluster.unreadPresence.sorted(by: { $0.key < $1.key }) {
            if documents.records[id] != nil {
                cluster.unreadPresence[id] = nil
                for (scene, entry) in unread.scenes where !cluster.expired.contains(entry.node) {
                    cluster.remotePresence[id, default: [:]][scene] = entry
                }
            } else if unread.after < finished {
                cluster.unreadPresence[id] = nil
            }
        }
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
            takeRemotePresence(Self.left(entry.presence), from: entry.node)
        }
        for (id, unread) in cluster.unreadPresence {
            let kept = unread.scenes.filter { !nodes.contains($0.value.node) }
            cluster.unreadPresence[id]?.scenes = kept
            if kept.isEmpty { cluster.unreadPresence[id] = nil }
        }
        dropPeople(of: nodes)
    }

    /// Before asking (`scenesWanted`): the other nodes' presence is dropped, as their scenes
    /// and people are, since a `left` missed meanwhile is never told again (the cursor of a
    /// person who left stayed until that node died). The document's scenes here see those
    /// scenes leave, and come back as the other nodes answer.
    mutating func forgetRemotePresence() {
        let held = cluster.remotePresence
        cluster.remotePresence = [:]
        cluster.unreadPresence = [:]
        for (id, entries) in held.sorted(by: { $0.key < $1.key }) {
            guard let document = documents.open[id] else { continue }
            let here = document.participants.values.map(\.connection).sorted()
            for (_, entry) in entries.sorted(by: { $0.key < $1.key }) {
                broadcast(.event(.presence(Self.left(entry.presence))), to: here)
            }
        }
    }

    /// Tells one node (that asked, `scenesWanted`, and forgot what it held of the others) the
    /// presence of every scene here that shares one, or every node (`to: nil`, after this
    /// node's listening connection was back: a node may have asked meanwhile). Each as it is
    /// now, at the document's revision here; one held back by `presenceIntervalMs` is still
    /// told to all when its interval ends.
    mutating func retellPresence(to asker: NodeID?) {
        // Alone, told to nobody: a node that joins asks (`scenesWanted`), or is told when first
        // known (`nodesAlive`).
        guard asker != nil || hasPeers else { return }
        for id in documents.open.keys.sorted() {
            guard let document = documents.open[id] else { continue }
            for participant in document.orderedParticipants where participant.shared {
                signal(.presence(participant.presenceJSON(document: id, revision: document.revision)), to: asker)
            }
        }
    }

    /// A scene's presence as the `presence` event that says it left.
    static func left(_ presence: JSONValue) -> JSONValue {
        var left = presence.objectValue ?? [:]
        left["left"] = true
        left["selection"] = .null
        return .object(left)
    }
}

/// Presence for a document whose record this node has not read yet, by scene, with the
/// number of record loads started before the first of it came (`Hub.keepUntilRead`).
struct UnreadPresence: Sendable {
    let after: Int
    var scenes: [SceneID: (node: NodeID, presence: JSONValue)]
}
