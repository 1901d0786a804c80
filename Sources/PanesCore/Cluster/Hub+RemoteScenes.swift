/// What a switcher shows of windows live on other nodes. A scene's lifecycle (its activation
/// state, its traits) lives on the node that holds it; that node tells the others of each
/// user's live scenes whenever they change (`NodeSignal.Kind.scenes`, the whole list of that
/// user's scenes there, so a later signal replaces an earlier one). Signals rather than
/// writes: a focus change costs a NOTIFY, not a transaction and a record read on every node,
/// and a lifecycle state means nothing once its node is gone. A signal missed while a node's
/// listening connection was down is asked for again (`scenesWanted`) when it is back: the node
/// forgets what it held of the others (an empty list it missed would otherwise leave closed
/// windows listed for good) and each answers with its non-empty lists. It also tells its own
/// lists to all again, for a node that asked while nobody here listened.
///
/// Which node holds a session is the claim's business (`cluster.claims`, with its epoch): an
/// entry counts only while no newer claim says otherwise and its node's lease holds.
extension Hub {
    /// Tells the other nodes of the user's live scenes here, when they changed since last told,
    /// at most every `sceneShareIntervalMs`: each signal lists every live scene of the user
    /// here, so telling at each change made a burst of N connects of one user cost N lists of
    /// up to N scenes, written, read and decoded by every node (10,000 windows of one user
    /// stalled a node's connects after ~4,000). A draining node tells at once: it may be gone
    /// before the interval. While no other node is known alive (`Hub+Peers.swift`) nothing is
    /// built: the user waits in `scenesToShare` until one is (`holdSceneShare`).
    mutating func scheduleSceneShare(of owner: OwnerKey) {
        guard !draining else { return share(owner, now: monotonic()) }
        guard hasPeers else { return holdSceneShare(of: owner) }
        guard cluster.scenesToShare.insert(owner).inserted else { return }
        let now = monotonic()
        let due = (cluster.scenesSharedAt[owner] ?? .min) + Millis(settings.sceneShareIntervalMs)
        // A change after a quiet interval goes at once; the changes that follow it wait.
        guard due > now else { return share(owner, now: now) }
        cluster.sceneShareDeadlines.push(owner, at: due)
    }

    /// Tells the other nodes of the users whose interval has passed.
    mutating func shareDueScenes(now: Millis) {
        for (_, owner) in cluster.sceneShareDeadlines.popDue(now: now) where cluster.scenesToShare.contains(owner) {
            share(owner, now: now)
        }
    }

    /// Tells the other nodes of every user whose scenes changed since last told, now (the
    /// first peer known after none: what was held back meanwhile).
    /// - Parameter again: a non-empty list is told even when it is what was last told (for a
    ///   node that asked, and forgot).
    /// - Returns: those users.
    mutating func shareScenesNow(again: Bool) -> Set<OwnerKey> {
        let owners = cluster.scenesToShare
        let now = monotonic()
        for owner in owners.sorted() { share(owner, now: now, again: again) }
        return owners
    }

    /// - Parameter again: tells a non-empty list even when it is what was last told.
    private mutating func share(_ owner: OwnerKey, now: Millis, again: Bool = false) {
        // Nobody to tell: held back until a node is known (`shareScenesNow`, or an answer).
        guard hasPeers else { return holdSceneShare(of: owner) }
        cluster.scenesToShare.remove(owner)
        let live = liveScenesHere(of: owner)
        guard live != (cluster.sharedScenes[owner] ?? [:]) || (again && !live.isEmpty) else { return }
        cluster.sharedScenes[owner] = live.isEmpty ? nil : live
        cluster.scenesSharedAt[owner] = live.isEmpty ? nil : now
        signal(.scenes(RemoteScene.json(owner: owner, live)), to: nil)
    }

    /// Alone, a user is held back only while there is something to tell once a node is known:
    /// a scene here, or a list told before (which the empty one replaces). Else a node alone for
    /// good (one node on a shared store) held every user who ever connected, and walked them
    /// all when a node came.
    private mutating func holdSceneShare(of owner: OwnerKey) {
        if scenes.hasScenes(of: owner) || cluster.sharedScenes[owner] != nil {
            cluster.scenesToShare.insert(owner)
        } else {
            cluster.scenesToShare.remove(owner)
        }
    }

    func liveScenesHere(of owner: OwnerKey) -> [SessionID: RemoteScene] {
        var live: [SessionID: RemoteScene] = [:]
        for scene in scenes.scenes(of: owner) where scenes.liveID(of: scene.session) == scene.id {
            live[scene.session] = RemoteScene(scene: scene.id, state: scene.state, traits: scene.traits.json,
                                              epoch: cluster.claims[scene.session]?.epoch ?? 0)
        }
        return live
    }

    /// Another node's live scenes of one user: kept, and this node's switchers told.
    mutating func takeRemoteScenes(_ json: JSONValue, from origin: NodeID) {
        guard let (owner, live) = RemoteScene.decode(json) else { return }
        // Sent before its node's lease ran out but read after (this node's listener far behind):
        // that node's scenes have gone with it (`dropRemoteScenes`), and nothing would drop
        // these again; kept, they stayed for good.
        guard !cluster.expired.contains(origin) else { return }
        guard cluster.remoteScenes[owner]?[origin] ?? [:] != live else { return }
        cluster.remoteScenes[owner, default: [:]][origin] = live.isEmpty ? nil : live
        if cluster.remoteScenes[owner]?.isEmpty == true { cluster.remoteScenes[owner] = nil }
        sessionsChanged(for: owner)
    }

    /// A node asked for every live scene here (it started, or lost its listening connection);
    /// it forgot what it held of this node when it asked, so users with nothing live here are
    /// left out. What the other nodes were last told (`sharedScenes`) is left alone: a share
    /// still due tells them, the asker included.
    /// - Parameter toldAll: users told to every node just now (held back while no other node
    ///   was known, `Hub+Peers.swift`): the asker has them.
    mutating func answerScenesWanted(by asker: NodeID, toldAll: Set<OwnerKey> = []) {
        for owner in scenes.owners where !toldAll.contains(owner) {
            let live = liveScenesHere(of: owner)
            guard !live.isEmpty else { continue }
            signal(.scenes(RemoteScene.json(owner: owner, live)), to: asker)
        }
    }

    /// Before asking (`scenesWanted`): what the other nodes told is dropped, since a list
    /// missed meanwhile (the empty one of a user whose windows there all closed) is never told
    /// again. Their windows show as the claims say until the answers come.
    mutating func forgetRemoteScenes() {
        let owners = cluster.remoteScenes.keys.sorted()
        cluster.remoteScenes = [:]
        for owner in owners { sessionsChanged(for: owner) }
    }

    /// Tells every node each user's live scenes here again, once per user, and what is due
    /// now: a node that asked while this node's listening connection was down got no answer.
    mutating func retellScenes(now: Millis) {
        for owner in Set(cluster.sharedScenes.keys).union(scenes.owners).sorted() {
            share(owner, now: now, again: true)
        }
    }

    /// The scene live on another node for this session, as its holder last told, if the claims
    /// say that node still holds it. A session claimed by another live node whose scenes have
    /// not been heard of yet gets a placeholder: live, `background`, scene and traits unknown.
    func remoteScene(of session: SceneSession) -> RemoteScene? {
        let claim = cluster.claims[session.id]
        let told = (cluster.remoteScenes[session.owner] ?? [:])
            .filter { !cluster.expired.contains($0.key) }
            .compactMap { node, live in live[session.id].map { (node: node, scene: $0) } }
            .max { ($0.scene.epoch, $0.node) < ($1.scene.epoch, $1.node) }
        if let told, claim.map({ told.scene.epoch > $0.epoch || (told.scene.epoch == $0.epoch && $0.node == told.node) }) ?? true {
            return told.scene
        }
        guard claimedElsewhere(session.id) else { return nil }
        return RemoteScene(scene: nil, state: .background, traits: .null, epoch: claim?.epoch ?? 0)
    }

    /// A scene of this user live on another node (the switcher lists it), with that node and
    /// the scene's session, if the claims say its node still holds it.
    func remoteLive(_ scene: SceneID, of owner: OwnerKey) -> (node: NodeID, session: SessionID)? {
        for (node, live) in (cluster.remoteScenes[owner] ?? [:]).sorted(by: { $0.key < $1.key })
        where !cluster.expired.contains(node) {
            for (session, entry) in live where entry.scene == scene {
                guard let stored = sessions[session], sceneElsewhere(of: stored)?.scene == scene else { continue }
                return (node, session)
            }
        }
        return nil
    }

    /// The scene a drop onto a named scene goes to when that scene is live on another node
    /// (the switcher lists it there): its node delivers the items (`Hub+RemoteDrops.swift`).
    func remoteReceiver(of target: DropTarget, named: SceneID?, dropper: Dropper) -> RemoteReceiver? {
        guard target == .scene, !dropper.isItself(named), let named, scenes[named] == nil,
              let remote = remoteLive(named, of: dropper.owner) else { return nil }
        return RemoteReceiver(node: remote.node, scene: named, session: remote.session)
    }

    /// The highest state of the user's scenes on other nodes (their part of the app state).
    func remoteAppState(of owner: OwnerKey) -> ActivationState? {
        return sessions.sessions(of: owner).compactMap { session in
            !scenes.isLive(session.id) ? sceneElsewhere(of: session)?.state : nil
        }.max()
    }

    /// Scenes of nodes whose lease ran out leave the switchers.
    mutating func dropRemoteScenes(of nodes: Set<NodeID>) -> Set<OwnerKey> {
        var owners: Set<OwnerKey> = []
        for (owner, byNode) in cluster.remoteScenes where !nodes.isDisjoint(with: byNode.keys) {
            owners.insert(owner)
            for node in nodes { cluster.remoteScenes[owner]?[node] = nil }
            if cluster.remoteScenes[owner]?.isEmpty == true { cluster.remoteScenes[owner] = nil }
        }
        return owners
    }
}

/// A scene live on some node as the switcher shows it, with the claim epoch it was live under.
struct RemoteScene: Sendable, Equatable {
    /// Nil when not known yet (`Hub.sceneElsewhere(of:)`).
    let scene: SceneID?
    let state: ActivationState
    let traits: JSONValue
    let epoch: Int64

    /// `{"workspace", "user", "scenes": [{"session", "scene", "state", "traits", "epoch"}]}`.
    static func json(owner: OwnerKey, _ live: [SessionID: RemoteScene]) -> JSONValue {
        let scenes: [JSONValue] = live.sorted { $0.key < $1.key }.map { session, scene in
            ["session": .string(session.rawValue), "scene": scene.scene.map { .string($0.rawValue) } ?? .null,
             "state": .string(scene.state.rawValue), "traits": scene.traits, "epoch": .int(scene.epoch)]
        }
        return ["workspace": .string(owner.workspace), "user": .string(owner.user), "scenes": .array(scenes)]
    }

    static func decode(_ json: JSONValue) -> (OwnerKey, [SessionID: RemoteScene])? {
        guard let workspace = json["workspace"]?.stringValue, let user = json["user"]?.stringValue,
              let list = json["scenes"]?.arrayValue else { return nil }
        var live: [SessionID: RemoteScene] = [:]
        for entry in list {
            guard let session = entry["session"]?.stringValue,
                  let state = entry["state"]?.stringValue.flatMap(ActivationState.init(rawValue:)),
                  let epoch = entry["epoch"]?.intValue else { return nil }
            live[SessionID(session)] = RemoteScene(scene: entry["scene"]?.stringValue.map(SceneID.init), state: state,
                                                   traits: entry["traits"] ?? .null, epoch: epoch)
        }
        return (OwnerKey(workspace: workspace, user: user), live)
    }
}
