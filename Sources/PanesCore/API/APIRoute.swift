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
        let target = Target(method: method, path: path, rest: Array(parts.dropFirst(2)), query: query,
                            body: try Self.fields(body, idempotencyKey: idempotencyKey), idempotencyKey: idempotencyKey)
        guard parts.count >= 3, parts[0] == "workspaces", MessageDecoder.isName(parts[1]) else {
            if parts.count >= 2, parts[0] == "workspaces" {
                throw PanesError.invalid("workspace", "must be 1 to 64 letters, digits, `.`, `_` or `-`")
            }
            throw target.notFound
        }
        workspace = parts[1]
        user = nil
        writes = false
        successStatus = 200
        operation = .listDocuments
        switch target.rest.first {
        case "documents" where target.rest.count >= 3 && ["shares", "links"].contains(target.rest[2]):
            try routeRights(target)
        case "documents": try routeDocuments(target, newOpId: newOpId())
        case "preferences": try routePreferences(target)
        case "users" where target.rest.count >= 3 && target.rest[2] == "sessions": try routeSessions(target)
        default: throw target.notFound
        }
    }

    /// What a route is read from: the method, the path's segments after the workspace, the
    /// query, and the body's fields (with the `Idempotency-Key` as `idempotencyKey`).
    struct Target {
        let method: String
        let path: String
        let rest: [String]
        let query: [(name: String, value: String)]
        let body: JSONObject
        let idempotencyKey: String?

        var notFound: PanesError { PanesError(.unknownType, "no API route \(method) \(path)") }

        func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }

        /// The protocol request `type` with the body's fields and `fields`.
        func request(_ type: String, _ fields: JSONObject = [:]) -> APIOperation {
            var object = body
            for (name, value) in fields { object[name] = value }
            object["type"] = .string(type)
            object["id"] = 1
            return .request(.object(object))
        }

        /// `?user=`, checked; nil without it.
        func userQuery() throws(PanesError) -> String? {
            try queryValue("user").map { name throws(PanesError) in try APIRoute.user(name) }
        }
    }

    /// The body as fields, refusing the envelope fields the route and headers set.
    private static func fields(_ body: JSONValue?, idempotencyKey: String?) throws(PanesError) -> JSONObject {
        var object: JSONObject = [:]
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
        return object
    }

    /// `documents`, `documents/{d}`, `documents/{d}/operations`.
    private mutating func routeDocuments(_ target: Target, newOpId: @autoclosure () -> String) throws(PanesError) {
        let rest = target.rest
        switch (target.method, rest.count) {
        case ("GET", 1):
            operation = .listDocuments
        case ("POST", 1):
            writes = true
            successStatus = 201
            operation = target.request("createDocument")
        case ("GET", 2):
            let document = try Self.identifier(rest[1], field: "document")
            var revision: Int64?
            if let text = target.queryValue("revision") {
                guard let number = Int64(text), number >= 0 else {
                    throw PanesError.invalid("revision", "must be a revision number (an integer from 0)")
                }
                revision = number
            }
            operation = .readDocument(DocumentID(document), revision: revision)
        case ("PATCH", 2), ("DELETE", 2):
            writes = true
            operation = target.request(target.method == "PATCH" ? "renameDocument" : "deleteDocument",
                                       ["document": .string(try Self.identifier(rest[1], field: "document"))])
        case ("POST", 3) where rest[2] == "operations":
            writes = true
            var fields: JSONObject = ["document": .string(try Self.identifier(rest[1], field: "document"))]
            if target.body["opId"] == nil || target.body["opId"] == .null {
                // A retry with the same key is the same operation: applied once (its `opId`).
                fields["opId"] = .string(target.idempotencyKey.map { "http.\($0)" } ?? newOpId())
            }
            operation = target.request("edit", fields)
        default:
            throw target.notFound
        }
    }

    /// Rights per document: `documents/{d}/shares` (list), `documents/{d}/shares/{user}` (grant
    /// a role, remove the grant), `documents/{d}/links` (create), `documents/{d}/links/{link}`
    /// (revoke). The hub lets only the document's owners (and the backend) through.
    private mutating func routeRights(_ target: Target) throws(PanesError) {
        let rest = target.rest
        let document: JSONValue = .string(try Self.identifier(rest[1], field: "document"))
        writes = target.method != "GET"
        switch (target.method, rest[2], rest.count) {
        case ("GET", "shares", 3):
            operation = target.request("listDocumentShares", ["document": document])
        case ("PUT", "shares", 4):
            operation = target.request("shareDocument", ["document": document,
                                                         "user": .string(try Self.identifier(rest[3], field: "user"))])
        case ("DELETE", "shares", 4):
            operation = target.request("unshareDocument", ["document": document,
                                                           "user": .string(try Self.identifier(rest[3], field: "user"))])
        case ("POST", "links", 3):
            successStatus = 201
            operation = target.request("createDocumentLink", ["document": document])
        case ("DELETE", "links", 4):
            operation = target.request("revokeDocumentLink", ["document": document,
                                                              "link": .string(try Self.identifier(rest[3], field: "link"))])
        default:
            throw target.notFound
        }
    }

    /// `preferences` (read), `preferences/{keyPath}` (set, remove); `?user=` for a user's.
    private mutating func routePreferences(_ target: Target) throws(PanesError) {
        user = try target.userQuery()
        let domain: JSONValue = .string(user == nil ? "workspace" : "user")
        switch (target.method, target.rest.count) {
        case ("GET", 1):
            operation = .readPreferences
        case ("PUT", 2), ("DELETE", 2):
            writes = true
            operation = target.request(target.method == "PUT" ? "setPreference" : "removePreference",
                                       ["domain": domain, "keyPath": .string(target.rest[1])])
        default:
            throw target.notFound
        }
    }

    /// `users/{u}/sessions` (list), `…/{s}/refresh`, `…/{s}` (destroy).
    private mutating func routeSessions(_ target: Target) throws(PanesError) {
        let rest = target.rest
        user = try Self.user(rest[1])
        switch (target.method, rest.count) {
        case ("GET", 3):
            operation = target.request("listSessions")
        case ("POST", 5) where rest[4] == "refresh":
            writes = true
            operation = target.request("requestRefresh", ["session": .string(try Self.identifier(rest[3], field: "session"))])
        case ("DELETE", 4):
            writes = true
            var fields: JSONObject = ["session": .string(try Self.identifier(rest[3], field: "session"))]
            if let animation = target.queryValue("animation") { fields["animation"] = .string(animation) }
            operation = target.request("requestDestruction", fields)
        default:
            throw target.notFound
        }
    }

    /// A path segment naming a document, session, user or link: non-empty, at most 64 bytes.
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

/// Who an API request acts as, once its principal checked out (`APIGate`).
public struct APICall: Sendable {
    public var route: APIRoute
    /// The user it acts as: the route's user, else the principal's actor (`api:<id>`,
    /// `service:<sub>`, or a user token's `sub`).
    public var user: String
    /// The author name of its edits.
    public var name: String
    /// Its role in the workspace: `owner` for the backend (an API key, a service token), the
    /// token's role for a user (`APIPrincipal.role(for:)`).
    public var role: Role
    /// The principal's own actor, whoever the request acts for: what webhook events name.
    public var actor: String
    /// A backend with `read` access: the hub refuses it every write, whatever its role (the
    /// gate refused it already; this keeps the rule where the writes are made too).
    public var readOnly: Bool

    public init(route: APIRoute, principal: APIPrincipal, role: Role) {
        self.route = route
        user = route.user ?? principal.actor
        name = principal.name
        self.role = role
        actor = principal.actor
        readOnly = principal.scope?.access == .read
    }

    /// A call with an API key: the backend, `owner` in the key's workspaces.
    public init(route: APIRoute, key: APIKey) {
        self.init(route: route, principal: APIPrincipal(.key(key)), role: .owner)
    }
}
