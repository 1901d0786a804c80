/// The stored form of a document's grants and links: one JSON array each, written and read
/// whole by both stores (the access of one document is small and always changes as a whole).
/// Links are stored with their token's hash only.
extension DocumentAccess {
    /// The `grants` column.
    public var grantsJSON: JSONValue {
        .array(grants.map(\.json))
    }

    /// The `links` column: as listed, plus the token's hash.
    public var linksJSON: JSONValue {
        .array(links.map { link in
            var fields = link.json.objectValue ?? [:]
            fields["tokenHash"] = .string(link.tokenHash)
            return .object(fields)
        })
    }

    /// Reads the stored columns back; entries that do not read are left out (a link that does
    /// not read opens nothing), and grants that do not all read mark the access `unreadable`
    /// (fail closed: a lost `none` grant must not open the document to its user).
    public init(grants: JSONValue?, links: JSONValue?, version: Int64) {
        self.init(version: version)
        if grants?.arrayValue == nil { unreadable = true }
        for entry in grants?.arrayValue ?? [] {
            guard let user = entry["user"]?.stringValue, let role = entry["role"]?.stringValue.flatMap(DocumentRole.init),
                  let by = entry["grantedBy"]?.stringValue, let at = entry["grantedAt"]?.intValue else {
                unreadable = true
                continue
            }
            self.grants.append(DocumentGrant(user: user, role: role, grantedBy: by, grantedAt: at))
        }
        for entry in links?.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue, let hash = entry["tokenHash"]?.stringValue,
                  let role = entry["role"]?.stringValue.flatMap(Role.init),
                  let by = entry["createdBy"]?.stringValue, let created = entry["createdAt"]?.intValue,
                  let expires = entry["expiresAt"]?.intValue else { continue }
            self.links.append(DocumentLink(id: id, tokenHash: hash, role: role, createdBy: by, createdAt: created,
                                           expiresAt: expires, revokedAt: entry["revokedAt"]?.intValue))
        }
    }
}
