/// Presence of scenes on other nodes (their cursors and selections in a document): each node
/// tells the others its scenes' presence as it changes (`NodeSignal.Kind.presence`, `left`
/// when a scene leaves), and keeps what the others told for the document's scenes here,
/// those that open it later included. A dead node's scenes leave with its lease, a deleted
/// document's with it (`documentRemoved`).
///
/// A node that asks again (`scenesWanted`: at start, after a rejoin, after its listening
/// connection was back) may have missed any of it, a `left` included, which nobody tells again.
/// It keeps what it showed, marked stale, and every node answers with its scenes' presence,
/// whole (`presenceRetold`, to the asker alone, in parts that fit a signal), each as it last
/// told it unless it changed since. A stale presence told again as it was is kept without a
/// word to the scenes here; one that moved is
/// told once, as a move; one a node's whole answer leaves out has left, and its scenes see it
/// leave then. What no answer refreshed yet stays for as long as its node lives: an answer can
/// wait on the asker's own writer, the other node's listener reconnecting and its writer, each
/// backing off up to 2 s, where a lease may be 500 ms, and a node whose listener alone is down
/// renews its lease all along. A node that never hears the question tells its presence to all,
/// whole, once its own listener is back (and any answer drops what it leaves out); a node that
/// dies has its presence leave with its lease (`nodesExpired`). Dropping stale presence when
/// asking, as this node did, or `nodeLeaseMs` after asking, as it did next, made every scene
/// here see every other node's cursors leave and come back after each blip of the database
/// connection (the second, whenever the answer came later than the lease).
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
            let held = cluster.remotePresence[document]?[scene]
            cluster.remotePresence[document, default: [:]][scene] = HeldPresence(node: origin, presence: presence)
            // Told again as it was (an answer after this node asked again): nothing moved.
            if let held, held.node == origin, held.presence.isIdentical(to: presence) { return }
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
                    cluster.remotePresence[id, default: [:]][scene] = HeldPresence(node: entry.node, presence: entry.presence)
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
        cluster.presenceAnswering.subtract(nodes)
        dropPeople(of: nodes)
    }

    /// Before asking (`scenesWanted`): what the other nodes told is kept, shown as it is, and
    /// marked stale, since a `left` or a move missed meanwhile is never told again; the answers
    /// refresh it (`takeRetoldPresence`), and what they leave out goes (with no deadline: a node
    /// alive answers in the end, and a dead one's presence goes with its lease). Presence
    /// waiting for its record is dropped: no scene here shows it, and the answers tell it again.
    mutating func markRemotePresenceStale() {
        cluster.unreadPresence = [:]
        cluster.presenceAnswering = []
        cluster.remotePresence = cluster.remotePresence.mapValues { held in
            held.mapValues { entry in
                var stale = entry
                stale.stale = true
                return stale
            }
        }
    }

    /// One part of another node's answer (`presenceRetold`): each presence in it taken as any
    /// other (refreshed, moved or new). Once this node has every part of that answer since it
    /// asked (the parts come in order, and a listener that missed one resubscribes, which asks
    /// again), what it still holds stale of that node has left.
    mutating func takeRetoldPresence(_ json: JSONValue, from origin: NodeID) {
        guard let retold = json["retold"]?.arrayValue, let part = json["part"]?.intValue,
              let parts = json["parts"]?.intValue, part >= 0, part < parts else { return }
        if part == 0 { cluster.presenceAnswering.insert(origin) }
        for presence in retold where presence["left"] != true {
            takeRemotePresence(presence, from: origin)
        }
        guard part == parts - 1, cluster.presenceAnswering.remove(origin) != nil else { return }
        dropStalePresence(of: origin)
    }

    /// Stale presence of one node leaves: its whole answer is in, and left it out.
    mutating func dropStalePresence(of origin: NodeID) {
        let gone = cluster.remotePresence.values.flatMap(\.values)
            .filter { $0.stale && $0.node == origin }
            .sorted { SceneID($0.presence["scene"]?.stringValue ?? "") < SceneID($1.presence["scene"]?.stringValue ?? "") }
        for entry in gone {
            takeRemotePresence(Self.left(entry.presence), from: entry.node)
        }
    }

    /// Tells one node (that asked, `scenesWanted`, and marked stale what it held of the others)
    /// the presence of every scene here that shares one, or every node (`to: nil`, after this
    /// node's listening connection was back: a node may have asked meanwhile). Each as it was
    /// last told (`DocumentParticipant.toldPresence`, at the revision it was made at: the asker
    /// moves it through the edits since, and finds it identical to what it holds), or, when a
    /// change is held back by `presenceIntervalMs`, as it is now (still told to all when its
    /// interval ends). In as few signals as stay under
    /// `NodeSignal.maxInlineBytes` (one per presence, as before, was one NOTIFY each: a node
    /// with 500 cursors sent 500 to every node that asked), and in one, empty, when there is
    /// none: the asker drops what it held of this node's once it has every part.
    /// - Parameter answering: an answer to a question (`scenesWanted`, or any asked while this
    ///   node's listener was down), told even when empty. A node first known from a read of
    ///   the nodes alive (`nodesAlive`) is told only presence there is: it is joining, and an
    ///   empty answer would reach it before its question, which then would not read as the
    ///   first it hears of this node (`Hub+Peers.swift`).
    mutating func retellPresence(to asker: NodeID?, answering: Bool = true) {
        // Alone, told to nobody: a node that joins asks (`scenesWanted`), or is told when first
        // known (`nodesAlive`).
        guard let node, asker != nil || hasPeers else { return }
        var presences: [JSONValue] = []
        for id in documents.open.keys.sorted() {
            guard let document = documents.open[id] else { continue }
            for participant in document.orderedParticipants where participant.shared {
                // As last told when nothing changed since (the receivers move it through the
                // edits since, as they did it); made now when a change is held back.
                let told = participant.held ? nil : participant.toldPresence
                presences.append(told ?? participant.presenceJSON(document: id, revision: document.revision))
            }
        }
        guard answering || !presences.isEmpty else { return }
        let parts = Self.parts(of: presences, from: node, to: asker)
        for (index, part) in parts.enumerated() {
            signal(.presenceRetold(Self.retold(part, part: index, parts: parts.count)), to: asker)
        }
    }

    /// `presences` in order, split so that each part's signal stays under
    /// `NodeSignal.maxInlineBytes` (a presence too large alone goes alone); one empty part
    /// when there are none.
    static func parts(of presences: [JSONValue], from node: NodeID, to asker: NodeID?) -> [[JSONValue]] {
        // The signal with no presence, numbered as high as any part can be.
        let most = max(presences.count, 1)
        let envelope = NodeSignal(from: node, to: asker, kind: .presenceRetold(retold([], part: most, parts: most)))
            .json.encodedSize
        var parts: [[JSONValue]] = []
        var current: [JSONValue] = []
        var size = envelope
        for presence in presences {
            let added = presence.encodedSize + (current.isEmpty ? 0 : 1)
            if !current.isEmpty, size + added > NodeSignal.maxInlineBytes {
                parts.append(current)
                current = []
                size = envelope
                size += presence.encodedSize
            } else {
                size += added
            }
            current.append(presence)
        }
        if !current.isEmpty || parts.isEmpty { parts.append(current) }
        return parts
    }

    /// A `presenceRetold` signal's value.
    static func retold(_ presences: [JSONValue], part: Int, parts: Int) -> JSONValue {
        ["retold": .array(presences), "part": .int(Int64(part)), "parts": .int(Int64(parts))]
    }

    /// A scene's presence as the `presence` event that says it left.
    static func left(_ presence: JSONValue) -> JSONValue {
        var left = presence.objectValue ?? [:]
        left["left"] = true
        left["selection"] = .null
        return .object(left)
    }
}

/// A presence told by a scene on another node, as it came; stale once this node asked again
/// (`scenesWanted`) until an answer tells it again (`Hub.markRemotePresenceStale`).
struct HeldPresence: Sendable {
    let node: NodeID
    let presence: JSONValue
    var stale = false
}

/// Presence for a document whose record this node has not read yet, by scene, with the
/// number of record loads started before the first of it came (`Hub.keepUntilRead`).
struct UnreadPresence: Sendable {
    let after: Int
    var scenes: [SceneID: (node: NodeID, presence: JSONValue)]
}
