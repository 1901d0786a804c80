/// An HTTP API request read into what the hub does with it: which workspace (and user) it acts
/// in, whether it writes, and the operation. Pure: the runtime hands it the method, the path
/// under `/api`, the query and the parsed body.
///
/// Writes become the protocol's own requests (`createDocument`, `edit`, `setPreference`,
/// `requestRefresh`…), decoded and checked by the same code as a scene's, so an HTTP write is
/// handled exactly like a window's. Reads that no request answers (a document's text, the
/// list without observing it) are `APIOperation`s of their own.
public struct APIRoute: Sendable {
    public var workspace: String
    /// The user whose sessions or preferences it acts on; nil: the key's own actor.
    public var user: String?
    public var writes: Bool
    /// The status of a success: 201 for a creation, else 200.
    public var successStatus: Int
    public var operation: APIOperation

    /// The API's version prefix, under the transport's `/api`.
    public static let prefix = "/api/v1/"

    /// Reads a request. Throws `unknown_type` (404) for a path no route has, `invalid_field` for
    /// a bad query parameter, and the request's own errors for a bad body.
    /// - Parameters:
    ///   - body: the parsed JSON body; nil when there was none.
    ///   - idempotencyKey: the `Idempotency-Key` header.
    ///   - newOpId: an operation id never used before, for an edit that names none and has no key.
    public init(method: String, path: String, query: [(name: String, value: String)], body: JSONValue?,
                idempotencyKey: String?, newOpId: @autoclosure () -> String) throws(PanesError) {
        guard path.hasPrefix(Self.prefix) else {
            throw PanesError(.unknownType, "no API route \(method) \(path); the API is under \(Self.prefix)")
        }
        let parts = path.dropFirst(Self.prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
        func notFound() -> PanesError { PanesError(.unknownType, "no API route \(method) \(path)") }
        guard parts.count >= 3, parts[0] == "workspaces", MessageDecoder.isName(parts[1]) else {
            if parts.count >= 2, parts[0] == "workspaces" {
                throw PanesError.invalid("workspace", "must be 1 to 64 letters, digits, `.`, `_` or `-`")
            }
            throw notFound()
        }
        workspace = parts[1]
        user = nil
        successStatus = 200
        var object: [String: JSONValue] = [:]
        if let body {
            guard case .object(let fields) = body else {
                throw PanesError(.invalidMessage, "the body must be a JSON object, not \(body.typeName)")
            }
            object = fields
        }
        for envelope in ["type", "id", "idempotencyKey"] where object[envelope] != nil {
            throw PanesError.invalid(envelope, "is set by the API (the route and the `Idempotency-Key` header), not the body")
        }
        if let idempotencyKey { object["idempotencyKey"] = .string(idempotencyKey) }
        func request(_ type: String, _ fields: [String: JSONValue] = [:]) -> APIOperation {
            var object = object
            for (name, value) in fields { object[name] = value }
            object["type"] = .string(type)
            object["id"] = 1
            return .request(.object(object))
        }
        let rest = Array(parts[2...])
        switch (method, rest.count, rest.first) {
        case ("GET", 1, "documents"):
            writes = false
            operation = .listDocuments
        case ("POST", 1, "documents"):
            writes = true
            successStatus = 201
            operation = request("createDocument")
        case (_, 2, "documents"):
            let document = try Self.identifier(rest[1], field: "document")
            switch method {
            case "GET":
                writes = false
                var revision: Int64?
                if let text = queryValue("revision") {
                    guard let number = Int64(text), number >= 0 else {
                        throw PanesError.invalid("revision", "must be a revision number (an integer from 0)")
                    }
                    revision = number
                }
                operation = .readDocument(DocumentID(document), revision: revision)
            case "PATCH":
                writes = true
                operation = request("renameDocument", ["document": .string(document)])
            case "DELETE":
                writes = true
                operation = request("deleteDocument", ["document": .string(document)])
            default:
                throw notFound()
            }
        case ("POST", 3, "documents") where rest[2] == "operations":
            let document = try Self.identifier(rest[1], field: "document")
            writes = true
            var fields: [String: JSONValue] = ["document": .string(document)]
            if object["opId"] == nil || object["opId"] == .null {
                // A retry with the same key is the same operation: applied once (its `opId`).
                fields["opId"] = .string(idempotencyKey.map { "http.\($0)" } ?? newOpId())
            }
            operation = request("edit", fields)
        case ("GET", 1, "preferences"):
            writes = false
            user = try queryValue("user").map { name throws(PanesError) in try Self.user(name) }
            operation = .readPreferences
        case ("PUT", 2, "preferences"):
            writes = true
            user = try queryValue("user").map { name throws(PanesError) in try Self.user(name) }
            operation = request("setPreference", ["domain": .string(user == nil ? "workspace" : "user"),
                                                  "keyPath": .string(rest[1])])
        case ("DELETE", 2, "preferences"):
            writes = true
            user = try queryValue("user").map { name throws(PanesError) in try Self.user(name) }
            operation = request("removePreference", ["domain": .string(user == nil ? "workspace" : "user"),
                                                     "keyPath": .string(rest[1])])
        case (_, _, "users") where rest.count >= 3 && rest[2] == "sessions":
            user = try Self.user(rest[1])
            switch (method, rest.count) {
            case ("GET", 3):
                writes = false
                operation = request("listSessions")
            case ("POST", 5) where rest[4] == "refresh":
                writes = true
                operation = request("requestRefresh", ["session": .string(try Self.identifier(rest[3], field: "session"))])
            case ("DELETE", 4):
                writes = true
                var fields: [String: JSONValue] = ["session": .string(try Self.identifier(rest[3], field: "session"))]
                if let animation = queryValue("animation") { fields["animation"] = .string(animation) }
                operation = request("requestDestruction", fields)
            default:
                throw notFound()
            }
        default:
            throw notFound()
        }
    }

    /// A path segment naming a document or session: non-empty, at most 64 bytes.
    static func identifier(_ segment: String, field: String) throws(PanesError) -> String {
        guard !segment.isEmpty, segment.utf8.count <= 64 else { throw PanesError.invalid(field, "must be 1 to 64 bytes") }
        return segment
    }

    static func user(_ name: String) throws(PanesError) -> String {
        guard MessageDecoder.isName(name) else { throw PanesError.invalid("user", "must be 1 to 64 letters, digits, `.`, `_` or `-`") }
        return name
    }
}

/// What an API request asks of the hub.
public enum APIOperation: Sendable, Equatable {
    /// A protocol request (`{"type": …, "id": 1, …}`), handled as a scene's would be.
    case request(JSONValue)
    /// The workspace's documents, as `observeDocuments` lists them, without observing.
    case listDocuments
    /// A document's text at its latest revision, or at `revision` while the store keeps it.
    case readDocument(DocumentID, revision: Int64?)
    /// The values of the workspace's domain, or of the route's user's.
    case readPreferences
}

/// Who an API request acts as, once its key checked out.
public struct APICall: Sendable {
    public var route: APIRoute
    /// The user it acts as: the route's user, else the key's actor (`api:<id>`).
    public var user: String
    /// The author name of its edits.
    public var name: String
    /// `editor` for a write key, `viewer` for a read key.
    public var role: Role
    /// The key's own actor (`api:<id>`), whoever the request acts for: what webhook events name.
    public var actor: String

    public init(route: APIRoute, key: APIKey) {
        self.route = route
        user = route.user ?? key.actor
        name = key.name
        role = key.access == .write ? .editor : .viewer
        actor = key.actor
    }
}
