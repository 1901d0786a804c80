/// A request a client can send. Each type is one file under `Requests/`: its fields, how they
/// are read and checked, and what the hub does with it; `RequestRegistry` lists them all, and
/// `PROTOCOL.schema.json` describes each on the wire.
///
/// Decoding (`init`) is pure and stateless: shapes, types, sizes. Checks that need state (does
/// the session exist, is the value's type the registered one) happen in `handle`.
public protocol Request: Sendable {
    /// The wire name: the request's `type`.
    static var type: String { get }
    /// Reads and checks the request's fields.
    /// - Parameter settings: for size limits that depend on configuration.
    init(_ fields: FieldReader, settings: Settings) throws(PanesError)
    /// Handles the request for a connected scene. Returns the reply's result, or nil when the
    /// hub replies later itself (after a load or a commit). A handler validates everything
    /// before it changes anything, so a thrown error always leaves state as it was.
    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue?
    /// Whether the request takes an `idempotencyKey`, and how its outcome is kept.
    static var idempotency: Idempotency { get }
    /// The fields that say what the request asks, for its fingerprint: a retry must ask the
    /// same, or its key was reused for another request.
    static func fingerprintFields(_ fields: JSONObject) -> JSONObject
    /// What of a successful reply's result is kept for a retry.
    static func recordedResult(_ result: JSONValue) -> JSONValue
    /// What a retry answered from a record is sent: the recorded result, made whole again where
    /// `recordedResult` left something out that can be derived (a keyed link's token).
    static func replayedResult(_ recorded: JSONValue, _ slot: RequestKeySlot, _ hub: Hub) -> JSONValue
    /// The request as a `connect`, nil for any other: asked of every connection's first
    /// request, through the witness table rather than a dynamic cast (`as?`), which cost a
    /// resume hundreds of instructions more (issue 27).
    var asConnect: ConnectRequest? { get }
}

extension Request {
    public static var idempotency: Idempotency { .none }

    /// Everything but the envelope.
    public static func fingerprintFields(_ fields: JSONObject) -> JSONObject {
        var fields = fields
        for envelope in ["type", "id", "idempotencyKey"] { fields[envelope] = nil }
        return fields
    }

    public static func recordedResult(_ result: JSONValue) -> JSONValue { result }

    public static func replayedResult(_ recorded: JSONValue, _ slot: RequestKeySlot, _ hub: Hub) -> JSONValue { recorded }

    public var asConnect: ConnectRequest? { nil }
}

/// How a request takes an `idempotencyKey` (`Hub+RequestKeys.swift`).
public enum Idempotency: Sendable, Equatable {
    /// It changes nothing stored, or nothing a retry would not set again the same way (a
    /// scene's live state, which a reconnect makes anew): a key is accepted and ignored.
    case none
    /// Its outcome is recorded in the transaction of its change. In a cluster, a key this node
    /// does not hold is first looked up in the store: another node may have answered it.
    case recorded
    /// Written through a channel commit, which records the key itself and which the store
    /// refuses when another node recorded the key first (`CommitOutcome.recorded`): no look-up.
    case recordedByCommit
}

/// Who sent a request and how to answer it later.
public struct RequestContext: Sendable {
    public let id: RequestID
    public let scene: SceneID
    public let connection: ConnectionID
    /// The request's `idempotencyKey` where it is in flight under one (`Hub+RequestKeys.swift`).
    public var key: RequestKeySlot? = nil
}

/// A decoded request: the client's identifier plus what it asks.
public struct ClientRequest: Sendable {
    public let id: RequestID
    public var request: any Request
    /// The client's `idempotencyKey`, for a request type that takes one.
    public let key: RequestKey?
    /// What the request asks (`RequestFingerprint`), when it has a key.
    public let fingerprint: String?
    /// The request's type as its position in `Hub.requestTypes`.
    public let typeIndex: Int

    /// - Parameter typeIndex: the type's position in `Hub.requestTypes` when the caller has it
    ///   (the decoder found the type there); otherwise it is looked up by the type's name.
    public init(id: RequestID, request: any Request, key: RequestKey? = nil, fingerprint: String? = nil,
                typeIndex: Int? = nil) {
        self.id = id
        self.request = request
        self.key = key
        self.fingerprint = fingerprint
        self.typeIndex = typeIndex ?? RequestRegistry.indexes[Swift.type(of: request).type]!
    }

    public var type: String { Swift.type(of: request).type }
}
