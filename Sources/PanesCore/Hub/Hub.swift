public import Logging

/// The server's live state and the rules that change it: a pure state machine.
///
/// Events go in (`handle(_:)`), effects come out; it does no I/O and reads the time only
/// through the injected clock. One owner: the runtime calls it from the lws service thread
/// only, so no locks are needed. Requests are one file each under `Requests/`; features live
/// in extensions (`Hub+Connect.swift`, `Hub+Preferences.swift`, …), and their tables in types
/// that keep them private behind small APIs (`Connections`, `Sessions`, `Scenes`,
/// `DocumentState`, `PreferenceState`, `SwitcherWatchers`, `DragState`).
///
/// What the hub holds is what the store has committed: writes to ordered channels (preference
/// domains, document logs) are applied when their commit comes back (`Hub+Commits.swift`);
/// single-writer state (sessions, document records) is applied at once and persisted, with
/// everything said about it held until it is durable (see `Effect`).
public struct Hub {
    public static let protocolVersion = 1

    public let settings: Settings
    public let configurations: [SceneConfiguration]
    public let authenticator: Authenticator
    /// How session secrets are hashed and compared; only hashes are kept.
    public let secretHasher: SecretHasher
    public let serverVersion: String
    /// This node, when the store is shared with other nodes (`Hub+Cluster.swift`); nil alone.
    public let node: NodeID?
    /// What happens at the named points where a cluster differs from a single node, chosen
    /// once from `node` (`Coordination`, `Hub+Coordination.swift`).
    let coordination: any Coordination
    /// Receivers of webhooks: changes write an event for each that wants it (`Hub+Webhooks.swift`).
    public let webhookEndpoints: [WebhookEndpoint]
    /// The wall clock: for timestamps (stored, sent, compared with another node's or a
    /// token's), and for expiries that are such a timestamp.
    let now: @Sendable () -> Millis
    /// The monotonic clock: for local deadlines, timeouts and intervals (connect timeouts,
    /// liveness probes, retries, rate limits), which setting the wall clock must not move.
    let monotonic: @Sendable () -> Millis
    let ids: IdentifierSource
    let decoder: MessageDecoder
    /// The parts of every `connect` reply that never change (`limits`, `server`), built once.
    let connectReplyConstants: ConnectReply.Constants
    var logger: Logger

    /// The transport connections, before and after each becomes a scene (`Connections`).
    var connections = Connections()
    /// The live scenes, by session and by owner, with the app states (`Scenes`).
    var scenes: Scenes
    /// Every session, live or not, by owner, with their idle deadlines (`Sessions`).
    var sessions: Sessions
    /// Scenes showing the switcher (`listSessions` with `watch`), per user.
    var switcher = SwitcherWatchers()
    /// Connections still to send `connect` (or whose `connect` is still being answered), oldest
    /// deadline first, for the connect timeout (`queueConnectTimeout`).
    var awaitingConnect = TimeoutQueue()
    var pendingConnects: [SessionID: [PendingConnect]] = [:]
    /// Connections holding requests that came behind a `connect` still being answered.
    var connectionsHolding: Set<ConnectionID> = []
    /// When each waiting liveness probe gives up.
    var probeDeadlines = DeadlineQueue<SessionID>()
    var tickets: [Identifier: Ticket] = [:]
    var ticketDeadlines = DeadlineQueue<String>()
    /// Failed authentications per peer address (`Hub+Authentication.swift`).
    var authFailures: AuthFailureLimiter
    var preferences: PreferenceState
    var drags = DragState()
    var documents = DocumentState()
    /// Version reads in flight and progress towards checkpoints (`Hub+Versions.swift`).
    var versions = VersionState()
    /// Grants and links per document, and the links scenes use (`Rights/`).
    var rights = DocumentRights()
    /// Channel writes waiting for their commit, and the requests queued behind them.
    var commits = CommitState()
    /// What this node follows of the others; empty alone.
    var cluster = ClusterState()
    /// Keyed requests: outcomes kept for retries, and requests in flight (`Hub+RequestKeys.swift`).
    var requestKeys: RequestKeyState
    /// The API key actor (`api:<id>`) of each service scene's request (`Hub+API.swift`).
    var serviceActors: [ConnectionID: String] = [:]
    /// Requests to handle again at the end of the current event (`Hub+RequestKeys.swift`).
    var redispatching: [RequestKeyState.Waiter] = []
    /// Counts events handled, so a reply can tell whether `effects` still holds what its
    /// request emitted.
    var turn: UInt64 = 0
    var draining = false
    /// Sessions changed while loading, to be written by `start()`: those that were live when
    /// the server last stopped, and those that referred to a document that is not stored.
    var recoveredSessions: [SessionID] = []
    public internal(set) var metrics = Metrics()
    /// Error lines that repeat while the store is away, at most one per kind every 5 s.
    var logLimits = LogLimiter()

    /// Effects produced while handling the current event, in order.
    var effects: [Effect] = []
    /// The most effects `effects` has had room for: each event starts with that much room, in
    /// the storage of the array the runtime handed back (`recycle`), or else in a new one.
    var effectsCapacity = 0
    /// The envelope of the request the last `received` event carried, as the decoder read it
    /// (`takeReceivedRequest`): the runtime times its reply without reading the frame again.
    var receivedRequest: (id: RequestID, typeIndex: Int?)?

    public init(settings: Settings = Settings(), configurations: [SceneConfiguration] = SceneConfiguration.defaults,
                authenticator: Authenticator = .open(), secretHasher: SecretHasher, stored: StoredState = StoredState(),
                preferenceDefaults: PreferenceDefaults = .standard, managedPreferences: ManagedPreferences = ManagedPreferences(),
                serverVersion: String = "dev", node: NodeID? = nil, webhookEndpoints: [WebhookEndpoint] = [],
                logger: Logger = Logger(label: "panes.hub"),
                now: @escaping @Sendable () -> Millis, monotonic: (@Sendable () -> Millis)? = nil,
                ids: IdentifierSource = .system) {
        precondition(!configurations.isEmpty, "at least one scene configuration is needed")
        self.settings = settings
        self.configurations = configurations
        self.authenticator = authenticator
        self.secretHasher = secretHasher
        self.serverVersion = serverVersion
        self.node = node
        coordination = makeCoordination(for: node)
        self.webhookEndpoints = webhookEndpoints
        cluster = ClusterState(stored: stored, node: node)
        scenes = Scenes(tokenSkew: Millis(settings.jwtClockSkewMs))
        sessions = Sessions(maxIdle: Millis(settings.sessionMaxIdleMs))
        self.logger = logger
        self.now = now
        // Tests drive one deterministic clock for both.
        self.monotonic = monotonic ?? now
        self.ids = ids
        if node != nil { cluster.heldDropPruneAt = self.monotonic() + Millis(settings.heldDropPruneIntervalMs) }
        self.decoder = MessageDecoder(settings: settings)
        connectReplyConstants = ConnectReply.Constants(settings: settings, serverVersion: serverVersion,
                                                       protocolVersion: Self.protocolVersion)
        authFailures = AuthFailureLimiter(burst: settings.authFailureBurst, perMinute: settings.authFailuresPerMinute,
                                          capacity: settings.maxAuthFailureAddresses)
        preferences = PreferenceState(stored: stored.preferences, defaults: preferenceDefaults, managed: managedPreferences)
        documents = DocumentState(stored: stored.documents)
        rights = DocumentRights(stored: stored.access, linkSecret: stored.linkSecret)
        let started = now()
        requestKeys = RequestKeyState(records: stored.requestRecords, now: started, settings: settings)
        for session in stored.sessions {
            var session = session
            // A session that had a live scene when the server stopped (or was killed) was in use
            // until then: it is not idle, whatever its last write says.
            if session.liveSince != nil {
                session.lastActiveAt = max(session.lastActiveAt, started)
                session.liveSince = nil
                recoveredSessions.append(session.id)
            }
            if let cleaned = session.forgettingMissingDocument(in: documents) {
                session = cleaned
                if recoveredSessions.last != session.id { recoveredSessions.append(session.id) }
            }
            sessions.insert(session)
        }
    }

    /// Handles one event and returns what to do about it, in order.
    public mutating func handle(_ event: consuming HubEvent) -> [Effect] {
        turn &+= 1
        if effects.capacity < effectsCapacity { effects.reserveCapacity(effectsCapacity) }
        // Taken apart, not copied: a copy of the event (its request, a resume's `connect`) and
        // its destruction after were ~240 instructions a resume (issue 27).
        switch consume event {
        case .opened(let connection, let peer):
            let opened = monotonic()
            connections.open(Connection(
                id: connection, peer: peer, bucket: TokenBucket.Level(burst: Double(settings.rateLimitBurst), now: opened)))
            queueConnectTimeout(connection, now: opened)
            metrics.connectionsOpened += 1
        case .received(let connection, let json):
            receive(json, on: connection)
        case .request(let connection, let request):
            receive(request, on: connection)
        case .unreadable(let connection, let reason):
            refuse(PanesError(.malformedJSON, "the frame is not valid JSON: \(reason)"), on: connection)
        case .refused(let connection, let error):
            refuse(error, on: connection)
        case .closed(let connection, let abnormal):
            connectionClosed(connection, abnormal: abnormal)
        case .pong(let connection):
            pongReceived(from: connection)
        case .loaded(let result):
            loaded(result)
        case .committed(let id, let outcome):
            committed(id, outcome)
        case .heldDropsFound(let sessions):
            heldDropsFound(sessions)
        case .tick:
            tick()
        case .drain:
            drain()
        case .notice(let notice):
            self.notice(notice)
        case .api(let connection, let call):
            serveAPI(connection, call)
        }
        if !redispatching.isEmpty { handleRedispatched() }
        if !connectionsHolding.isEmpty { handleHeldRequests() }
        if !commits.closingAfterAnswers.isEmpty { closeAnswered() }
        if requestKeys.hasForgotten { forgetInStore() }
        effectsCapacity = max(effectsCapacity, effects.capacity)
        // Handed over whole: emptying `effects` in place would allocate a new buffer, the
        // returned array still sharing this one.
        defer { effects = [] }
        return effects
    }

    // MARK: Requests

    /// Handles a decoded request according to where its connection is.
    /// - Parameter known: the connection's phase when the caller just read it (`admit`): a
    ///   frame's request looked its connection up twice (issue 27).
    mutating func dispatch(_ request: ClientRequest, on connectionID: ConnectionID, phase known: Connection.Phase? = nil) {
        guard let phase = known ?? connections[connectionID]?.phase else { return }
        do throws(PanesError) {
            switch phase {
            case .awaitingConnect:
                guard let connect = request.request.asConnect else {
                    throw PanesError(.notConnected, "send `connect` first")
                }
                if request.key != nil {
                    // Keys belong to a user: who it is comes first (a cached check for a token).
                    let identity = try authenticator.authenticate(connect.credentials, workspace: connect.workspace, now: now())
                    guard screenKeyed(request, owner: OwnerKey(workspace: connect.workspace, user: identity.user),
                                      on: connectionID).handle else { return }
                }
                try self.connect(connect, requestID: request.id, on: connectionID)
            case .answering:
                // Sent right behind a `connect` that waits (for a claim on the session, a live
                // window's answer, another node's write): a client may pipeline, and a connect
                // answered at once would have let this through, so it waits too, in order.
                guard connections.heldCount(connectionID) < settings.maxRequestsBehindConnect else {
                    throw PanesError(.tooMany, "over \(settings.maxRequestsBehindConnect) requests sent before the `connect` "
                                         + "was answered (setting `maxRequestsBehindConnect`)")
                }
                connections.hold(request, on: connectionID)
                connectionsHolding.insert(connectionID)
            case .closing:
                return
            case .scene(let sceneID):
                var key: RequestKeySlot?
                if request.key != nil, let owner = scenes[sceneID]?.owner {
                    let screened = screenKeyed(request, owner: owner, on: connectionID)
                    guard screened.handle else { return }
                    key = screened.slot
                }
                let context = RequestContext(id: request.id, scene: sceneID, connection: connectionID, key: key)
                if let result = try request.request.handle(&self, context) {
                    send(.reply(request.id, result: result), to: connectionID)
                }
            }
        } catch {
            fail(request.id, request: request.type, error, to: connectionID)
        }
    }

    /// Requests held behind a `connect`, handled once it is answered (after its reply), in the
    /// order they came; if it failed they get what they would have got without it.
    mutating func handleHeldRequests() {
        for id in connectionsHolding.sorted() {
            guard let phase = connections[id]?.phase else {
                connectionsHolding.remove(id)
                continue
            }
            if case .answering = phase { continue }
            connectionsHolding.remove(id)
            for request in connections.takeHeld(id) { dispatch(request, on: id) }
        }
    }

    // MARK: Effects

    /// - Parameter message: consumed: moved into its effect, not copied (issue 27).
    mutating func send(_ message: consuming ServerMessage, to connection: ConnectionID) {
        // A reply to a keyed request records its outcome; one to a request answered already
        // (`outcome_unknown`) does not go out again.
        if !requestKeys.isIdle || !commits.answered.isEmpty || !commits.outcomeLater.isEmpty,
           replyLeaving(message, to: connection) { return }
        metrics.messagesOut += 1
        let endsService = Self.isServiceConnection(connection) && (message.replyTo != nil || !message.isEvent)
        if case .failure(_, _, let error) = message, error.code == .storageFailed {
            // It reveals nothing stored: it does not wait for other connections' persists.
            effects.append(.sendUnapplied(message, to: connection))
        } else {
            effects.append(.send(message, to: connection))
        }
        if endsService { endService(connection) }
    }

    /// Sends ahead of anything held for durability: only for messages that reveal no stored state.
    mutating func sendUnheld(_ message: ServerMessage, to connection: ConnectionID) {
        metrics.messagesOut += 1
        effects.append(.sendNow(message, to: connection))
    }

    mutating func broadcast(_ message: ServerMessage, to connections: [ConnectionID]) {
        guard !connections.isEmpty else { return }
        metrics.messagesOut += connections.count
        if connections.count == 1 {
            effects.append(.send(message, to: connections[0]))
        } else {
            effects.append(.broadcast(message, to: connections))
        }
    }

    mutating func persist(_ commands: StoreCommand...) {
        persist(commands)
    }

    mutating func persist(_ commands: [StoreCommand]) {
        effects.append(.persist(counted(commands)))
        sessionsWritten(commands)
    }

    /// Keeps a changed session and persists it.
    mutating func store(_ session: SceneSession) {
        sessions.put(session)
        persist(.putSession(session))
    }

    mutating func fail(_ id: RequestID?, request: String?, _ error: PanesError, to connection: ConnectionID) {
        metrics.errors[error.code.rawValue, default: 0] += 1
        logger.debug("request failed", metadata: [
            "connection": "\(connection)", "request": "\(request ?? "?")", "code": "\(error.code.rawValue)",
            "message": "\(error.message)",
        ])
        send(.failure(id, request: request, error), to: connection)
    }

    /// Logs a line that can repeat for as long as the store is away (each failed read, commit
    /// or retry), rate-limited (`LogLimiter`).
    mutating func logLimited(_ level: Logger.Level, _ message: Logger.Message, metadata: Logger.Metadata = [:]) {
        logLimits.log(logger, level, message, metadata: metadata, now: monotonic())
    }

    /// Tells the connection to close. It stays closing until its socket is gone; a `connect`
    /// it had waiting for a probe is dropped now, as when the socket goes (`dropPendingConnect`),
    /// and any other wait finds it closing where it resolves (`Connections.isOpen`).
    mutating func close(_ connection: ConnectionID, _ code: CloseCode, reason: String) {
        let phase = connections[connection]?.phase
        guard connections.markClosing(connection) else { return }
        if case .answering(let session)? = phase {
            dropPendingConnect(of: connection, waitingOn: session)
            // Its keyed `connect` is given up now, not when the socket goes, so a retry elsewhere
            // is answered at once (giving up is idempotent: `connectionClosed` finds nothing).
            for ref in requestKeys.connects(from: connection) { abandonKeyed(ref) }
        }
        effects.append(.close(connection, code, reason: reason))
    }

    // MARK: Lookup

    func scene(_ id: SceneID) -> Scene { scenes[id]! }

    /// The session a scene may act on: its own user's, in its own workspace. Anything else is
    /// reported exactly like a session that does not exist.
    func ownedSession(_ id: SessionID, by scene: Scene) throws(PanesError) -> SceneSession {
        guard let session = sessions[id], session.owner == scene.owner else {
            throw PanesError(.sessionNotFound, "no session \(id) of yours", field: "session")
        }
        return session
    }

    /// Metadata for a restoration activity saved now by this scene.
    func restorationMetadata(for scene: Scene) -> RestorationMetadata {
        RestorationMetadata(savedAt: now(), serverVersion: serverVersion, protocolVersion: Self.protocolVersion,
                            clientVersion: scene.clientVersion)
    }
}
