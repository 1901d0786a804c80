/// What one document's owners decided about who may open it: grants to users and links. Stored
/// whole (`StoreCommand.putDocumentAccess`), read whole at start and by other nodes
/// (`RecordChanges.access`); small, bounded by `maxSharesPerDocument`.
public struct DocumentAccess: Sendable, Equatable {
    /// Grants by user, oldest first; a user has at most one.
    public var grants: [DocumentGrant]
    /// Links, oldest first; a revoked link stays (marked) until the document goes, so its
    /// token keeps being refused by name instead of reading as unknown.
    public var links: [DocumentLink]
    /// Counts changes. A node takes a copy read from the store only if it is not older than
    /// its own, so the read of a change made here, overtaken by a newer one, is not taken back.
    public var version: Int64
    /// The stored grants did not all read back (a damaged row): the document is then closed to
    /// all but workspace owners rather than opened to whom a lost `none` grant kept out.
    public var unreadable = false

    public init(grants: [DocumentGrant] = [], links: [DocumentLink] = [], version: Int64 = 0) {
        self.grants = grants
        self.links = links
        self.version = version
    }

    public var isEmpty: Bool { grants.isEmpty && links.isEmpty }

    /// The user's grant, compared by bytes.
    public func grant(for user: String) -> DocumentGrant? {
        grants.first { Identifier.equal($0.user, user) }
    }
}

/// A role given to one user for one document; `none` takes the document away from them.
public struct DocumentGrant: Sendable, Equatable {
    public let user: String
    public var role: DocumentRole
    public var grantedBy: String
    public var grantedAt: Millis

    public init(user: String, role: DocumentRole, grantedBy: String, grantedAt: Millis) {
        self.user = user
        self.role = role
        self.grantedBy = grantedBy
        self.grantedAt = grantedAt
    }

    var json: JSONValue {
        ["user": .string(user), "role": .string(role.rawValue), "grantedBy": .string(grantedBy), "grantedAt": .int(grantedAt)]
    }
}

/// A role for one document as a grant gives it: a workspace role, or `none` (no access).
public enum DocumentRole: String, Sendable, CaseIterable {
    case none, viewer, editor, owner

    /// The role it gives; nil for `none`.
    public var role: Role? { Role(rawValue: rawValue) }
}

/// A link to a document: whoever presents its token (a scene of the same workspace) may open
/// the document with its role until it expires or is revoked. Only the token's hash is kept.
public struct DocumentLink: Sendable, Equatable {
    /// Public: names the link in lists and `revokeDocumentLink`; it opens nothing.
    public let id: String
    /// SHA-256 of the token (`SecretHasher`).
    public let tokenHash: String
    public let role: Role
    public let createdBy: String
    public let createdAt: Millis
    public let expiresAt: Millis
    /// When it was revoked; nil while it stands.
    public var revokedAt: Millis?

    public init(id: String, tokenHash: String, role: Role, createdBy: String, createdAt: Millis, expiresAt: Millis,
                revokedAt: Millis? = nil) {
        self.id = id
        self.tokenHash = tokenHash
        self.role = role
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }

    /// Whether it opens the document at `now`.
    public func isValid(at now: Millis) -> Bool { revokedAt == nil && now < expiresAt }

    var json: JSONValue {
        var fields: JSONObject = [
            "id": .string(id), "role": .string(role.rawValue), "createdBy": .string(createdBy),
            "createdAt": .int(createdAt), "expiresAt": .int(expiresAt),
        ]
        if let revokedAt { fields["revokedAt"] = .int(revokedAt) }
        return .object(fields)
    }
}
