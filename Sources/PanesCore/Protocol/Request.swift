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
}

/// Who sent a request and how to answer it later.
public struct RequestContext: Sendable {
    public let id: RequestID
    public let scene: SceneID
    public let connection: ConnectionID
}

/// A decoded request: the client's identifier plus what it asks.
public struct ClientRequest: Sendable {
    public let id: RequestID
    public let request: any Request

    public var type: String { Swift.type(of: request).type }
}
