public import Logging

/// The server's live state and the rules that change it: a pure state machine.
///
/// Events go in (`handle(_:)`), effects come out; it does no I/O and reads the time only
/// through the injected clock. One owner: the runtime calls it from the lws service thread
/// only, so no locks are needed. Features live in extensions: `Hub+Connect.swift`,
/// `Hub+Lifecycle.swift`, `Hub+Sessions.swift`, `Hub+Maintenance.swift`.
public struct Hub {
    public static let protocolVersion = 1

    public let settings: Settings
    public let configurations: [SceneConfiguration]
    public let authenticator: Authenticator
    /// How session secrets are hashed and compared; only hashes are kept.
    public let secretHasher: SecretHasher
    public let serverVersion: String
    let now: @Sendable () -> Millis
    let ids: IdentifierSource
    let decoder: MessageDecoder
    var logger: Logger

    var connections: [ConnectionID: Connection] = [:]
    var scenes: [SceneID: Scene] = [:]
    var sessions: [SessionID: SceneSession] = [:]
    var sessionsByOwner: [OwnerKey: Set<SessionID>] = [:]
    /// The live scene of each session; at most one.
    var liveScenes: [SessionID: SceneID] = [:]
    var scenesByOwner: [OwnerKey: Set<SceneID>] = [:]
    /// Each user's scenes counted by state: the app state without a scan of every scene.
    var stateCounts: [OwnerKey: StateCounts] = [:]
    /// Scenes showing the switcher (`listSessions` with `watch`), per user.
    var switcherWatchers: [OwnerKey: Set<SceneID>] = [:]
    /// Connections still to send `connect`, oldest first, for the connect timeout.
    var awaitingConnect = TimeoutQueue()
    var pendingConnects: [SessionID: [PendingConnect]] = [:]
    var tickets: [String: Ticket] = [:]
    var appStates: [OwnerKey: ActivationState] = [:]
    var preferences: PreferenceState
    var drags = DragState()
    var documents = DocumentState()
    var draining = false
    var lastIdleSweep: Millis = 0
    /// When each scene's token stops being accepted, soonest first (`Hub+Tokens.swift`).
    var tokenExpiries = DeadlineQueue<SceneID>()
    public internal(set) var metrics = Metrics()

    /// Effects produced while handling the current event, in order.
    var effects: [Effect] = []

    public init(settings: Settings = Settings(), configurations: [SceneConfiguration] = SceneConfiguration.defaults,
                authenticator: Authenticator = .open(), secretHasher: SecretHasher, stored: StoredState = StoredState(),
                preferenceDefaults: PreferenceDefaults = .standard,
                serverVersion: String = "dev", logger: Logger = Logger(label: "panes.hub"),
                now: @escaping @Sendable () -> Millis, ids: IdentifierSource = .system) {
        precondition(!configurations.isEmpty, "at least one scene configuration is needed")
        self.settings = settings
        self.configurations = configurations
        self.authenticator = authenticator
        self.secretHasher = secretHasher
        self.serverVersion = serverVersion
        self.logger = logger
        self.now = now
        self.ids = ids
        self.decoder = MessageDecoder(settings: settings)
        preferences = PreferenceState(stored: stored.preferences, defaults: preferenceDefaults)
        documents = DocumentState(stored: stored.documents)
        for session in stored.sessions {
            sessions[session.id] = session
            sessionsByOwner[session.owner, default: []].insert(session.id)
        }
    }

    /// Handles one event and returns what to do about it, in order.
    public mutating func handle(_ event: HubEvent) -> [Effect] {
        switch event {
        case .opened(let connection):
            connections[connection] = Connection(
                id: connection, openedAt: now(),
                bucket: TokenBucket(rate: settings.rateLimitPerSecond, burst: settings.rateLimitBurst, now: now()))
            awaitingConnect.append(connection, deadline: now() + Millis(settings.connectTimeoutMs))
            metrics.connectionsOpened += 1
        case .received(let connection, let json):
            receive(json, on: connection)
        case .unreadable(let connection, let reason):
            guard connections[connection] != nil else { break }
            metrics.requests["(unreadable)", default: 0] += 1
            fail(nil, request: nil, PanesError(.malformedJSON, "the frame is not valid JSON: \(reason)"), to: connection)
        case .closed(let connection, let abnormal):
            connectionClosed(connection, abnormal: abnormal)
        case .pong(let connection):
            pongReceived(from: connection)
        case .loaded(let result):
            loaded(result)
        case .tick:
            tick()
        case .drain:
            drain()
        }
        defer { effects.removeAll(keepingCapacity: true) }
        return effects
    }

    // MARK: Requests

    mutating func receive(_ json: JSONValue, on connectionID: ConnectionID) {
        guard var connection = connections[connectionID] else { return }
        if case .closing = connection.phase { return }
        let (allowed, retryAfter) = connection.bucket.take(now: now())
        connections[connectionID] = connection
        let request: ClientRequest
        switch decoder.decode(json) {
        case .failure(let failure):
            // Requests that did not decode are counted together: their `type` is the client's
            // text and must not grow the metric's label space.
            metrics.requests["(invalid)", default: 0] += 1
            fail(failure.id, request: failure.type, failure.error, to: connectionID)
            return
        case .success(let decoded):
            request = decoded
        }
        metrics.requests[request.message.type, default: 0] += 1
        guard allowed else {
            fail(request.id, request: request.message.type, PanesError(
                .rateLimited, "over \(settings.rateLimitPerSecond) requests a second (setting `rateLimitPerSecond`)",
                retryAfterMs: retryAfter), to: connectionID)
            return
        }
        do throws(PanesError) {
            switch connection.phase {
            case .awaitingConnect:
                guard case .connect(let connect) = request.message else {
                    throw PanesError(.notConnected, "send `connect` first")
                }
                try self.connect(connect, requestID: request.id, on: connectionID)
            case .probing:
                throw PanesError(.notConnected, "the `connect` is still being answered")
            case .closing:
                return
            case .scene(let sceneID):
                if let result = try handle(request.message, from: sceneID) {
                    send(.reply(request.id, result: result), to: connectionID)
                }
            }
        } catch {
            fail(request.id, request: request.message.type, error, to: connectionID)
        }
    }

    /// Handles a request from a connected scene. Returns the reply's result, or nil when the
    /// handler replies itself. A handler validates everything before it changes anything, so
    /// a thrown error always leaves state as it was.
    mutating func handle(_ message: ClientMessage, from sceneID: SceneID) throws(PanesError) -> JSONValue? {
        switch message {
        case .connect:
            throw PanesError(.alreadyConnected, "this connection is already scene \(sceneID)")
        case .lifecycle(let visible, let focused):
            return reportLifecycle(visible: visible, focused: focused, scene: sceneID)
        case .updateActivity(let activity):
            return updateActivity(activity, scene: sceneID)
        case .setUserInfo(let userInfo, let merge):
            return try setUserInfo(userInfo, merge: merge, scene: sceneID)
        case .listSessions(let watch):
            return listSessions(watch: watch, scene: sceneID)
        case .requestDestruction(let session, let animation):
            return try requestDestruction(session, animation: animation, scene: sceneID)
        case .ping:
            return ["now": .int(now())]
        case .refreshToken(let token):
            return try refreshToken(token, scene: sceneID)
        case .preferences(let request):
            return try handle(request, from: sceneID)
        case .windows(let request):
            return try handle(request, from: sceneID)
        case .documents(let request):
            return try handle(request, from: sceneID)
        }
    }

    // MARK: Effects

    mutating func send(_ message: ServerMessage, to connection: ConnectionID) {
        metrics.messagesOut += 1
        effects.append(.send(message, to: connection))
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
        effects.append(.persist(commands))
    }

    mutating func fail(_ id: RequestID?, request: String?, _ error: PanesError, to connection: ConnectionID) {
        metrics.errors[error.code.rawValue, default: 0] += 1
        logger.debug("request failed", metadata: [
            "connection": "\(connection)", "request": "\(request ?? "?")", "code": "\(error.code.rawValue)",
            "message": "\(error.message)",
        ])
        send(.failure(id, request: request, error), to: connection)
    }

    mutating func close(_ connection: ConnectionID, _ code: CloseCode, reason: String) {
        guard var state = connections[connection] else { return }
        if case .scene(let scene) = state.phase {
            state.phase = .closing(scene)
        } else {
            state.phase = .closing(nil)
        }
        connections[connection] = state
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
}
