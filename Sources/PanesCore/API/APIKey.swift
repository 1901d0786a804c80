/// An API key as the operator configured it: the SHA-256 of its secret (never the secret),
/// the workspaces it may act in, and whether it may write.
///
/// ```json
/// { "keys": [ { "id": "crm", "sha256": "9f86d0…", "workspaces": ["acme"], "access": "write",
///               "name": "CRM sync" } ] }
/// ```
/// `panes apikey create` makes a secret and prints its entry. Keys are read from the file given
/// with `--api-keys` at start and again on SIGHUP: adding, rotating (a new entry, then the old
/// one removed) and revoking (removing the entry) need no restart.
public struct APIKey: Sendable, Equatable {
    public enum Access: String, Sendable, CaseIterable {
        /// GET only.
        case read
        /// Everything: reads and writes.
        case write
    }

    /// Names the key in logs, rate limits and as the actor of what it writes (`api:<id>`).
    public var id: String
    /// SHA-256 of the secret, 64 lowercase hex digits.
    public var sha256: String
    /// Workspaces it may act in; `["*"]` for every workspace.
    public var workspaces: [String]
    public var access: Access
    /// Shown as the author of the edits it makes; its id if not given.
    public var name: String

    public init(id: String, sha256: String, workspaces: [String], access: Access, name: String? = nil) {
        self.id = id
        self.sha256 = sha256
        self.workspaces = workspaces
        self.access = access
        self.name = name ?? id
    }

    /// The user it acts as: its own, which no JWT `sub` or token user can be confused with
    /// (`api:` cannot start a workspace user's name: `:` is not a name byte).
    public var actor: String { "api:\(id)" }

    /// Its workspaces and access.
    public var scope: APIScope { APIScope(workspaces: workspaces, access: access) }

    /// Whether it may act in the workspace, compared by bytes.
    public func covers(_ workspace: String) -> Bool { scope.covers(workspace) }

    /// Reads one entry of the keys file (`field` names it in errors).
    public init(json: JSONValue, field: String) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid(field, "must be an object") }
        let fields = FieldReader(object, prefix: field)
        try fields.refuseUnknownKeys(["id", "sha256", "workspaces", "access", "name"], what: "an API key field")
        id = try fields.requiredString("id", maxLength: 64)
        guard !id.isEmpty, id.utf8.allSatisfy({ Self.idBytes.contains($0) }) else {
            throw .invalid(fields.path("id"), "must be letters, digits, `_` or `-`")
        }
        sha256 = try fields.requiredString("sha256", maxLength: 64).lowercased()
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ Self.hexBytes.contains($0) }) else {
            throw .invalid(fields.path("sha256"), "must be 64 hex digits: the SHA-256 of the secret")
        }
        let scope = try APIScope(fields)
        workspaces = scope.workspaces
        access = scope.access
        name = try fields.string("name", maxLength: 128) ?? id
    }

    static let idBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-".utf8)
    static let hexBytes = Set("0123456789abcdef".utf8)
}

/// The keys a server accepts, found by the hash of the secret a request presents.
public struct APIKeyring: Sendable {
    public private(set) var keys: [APIKey] = []
    private var byHash: [Identifier: APIKey] = [:]

    public init(_ keys: [APIKey] = []) {
        self.keys = keys
        for key in keys { byHash[key.sha256] = key }
    }

    /// Reads a keys file: `{"keys": [...]}`. Ids and hashes must be unique.
    public init(json: JSONValue) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid("keys file", "must be a JSON object") }
        let fields = FieldReader(object)
        try fields.refuseUnknownKeys(["keys"], what: "a keys file key")
        let list = try fields.array("keys") ?? []
        let keys = try list.enumerated().map { index, entry throws(PanesError) in
            try APIKey(json: entry, field: "keys[\(index)]")
        }
        var ids = Set<Identifier>()
        var hashes = Set<Identifier>()
        for (index, key) in keys.enumerated() {
            guard ids.insert(Identifier(key.id)).inserted else { throw .invalid("keys[\(index)].id", "`\(key.id)` is used twice") }
            guard hashes.insert(Identifier(key.sha256)).inserted else { throw .invalid("keys[\(index)].sha256", "is another key's hash too") }
        }
        self.init(keys)
    }

    /// The key whose secret hashes to `hash`. The hash of a secret of 256 random bits is looked
    /// up, not compared: knowing how long the look-up took tells nothing about a secret.
    public func key(hash: String) -> APIKey? { byHash[hash] }
}
