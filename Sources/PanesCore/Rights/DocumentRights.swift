/// Rights per document: the grants and links of every document (`DocumentAccess`), the links
/// each live scene opened a document through, and the role each scene was last told for the
/// documents it has open. Owns its state; the hub asks it (`role`) and tells it what changed.
///
/// How roles combine (PROTOCOL.md, "Rights per document"): a workspace owner owns every
/// document; otherwise a user's grant for the document, if any, replaces the workspace role
/// (raising or lowering it, `none` taking the document away); otherwise the document's creator
/// owns it; otherwise the workspace role holds. A link a scene opened the document through
/// raises that scene's role to the link's while the link stands.
///
/// Like the rest of the hub's state, touched on the service thread only.
struct DocumentRights: Sendable {
    private var access: [DocumentID: DocumentAccess] = [:]
    /// Token hash → the document whose link it is.
    private var documentsByToken: [String: DocumentID] = [:]
    /// The link (by id) each scene opened each document through.
    private var linkUses: [SceneID: [DocumentID: String]] = [:]
    /// The role each scene was last told for each document it has open.
    private var told: [SceneID: [DocumentID: Role]] = [:]
    /// When links in use expire, so the scenes using them lose what they gave at once.
    private(set) var expiries = DeadlineQueue<DocumentID>()
    /// The key keyed links' tokens are derived under (`StoredState.linkSecret`).
    private let linkSecret: [UInt8]
    /// Counts changes that can lower a user's role for a document without a link: a document's
    /// grants changing, and a scene's workspace role changing (`workspaceRoleChanged`). An edit
    /// queued at one count and sent without a link needs no second check while it holds
    /// (`Hub.refusal(of:_:)`): the check costs a scene lookup by id, hashed by its bytes.
    private(set) var epoch: UInt64 = 0

    init(stored: [DocumentID: DocumentAccess] = [:], linkSecret: [UInt8] = []) {
        self.linkSecret = linkSecret
        for (id, access) in stored { set(id, access) }
    }

    /// The token of the link `linkID` made by a `createDocumentLink` sent with an
    /// `idempotencyKey`: HMAC-SHA-256, under the deployment's link secret, of the workspace, the
    /// user, the key and the link id (each prefixed by its length in bytes). A retry answered
    /// from the request's record (which keeps the reply without its token) gets the same token
    /// again, on any node, though only its hash is stored. Nil without a secret or a MAC.
    func keyedToken(_ slot: RequestKeySlot, link linkID: String, mac: SecretHasher) -> String? {
        guard !linkSecret.isEmpty, let mac = mac.mac else { return nil }
        var message: [UInt8] = []
        for part in [Array(slot.owner.workspace.utf8), Array(slot.owner.user.utf8), slot.key.bytes, Array(linkID.utf8)] {
            let count = UInt32(part.count)
            message += [UInt8(count >> 24), UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8),
                        UInt8(truncatingIfNeeded: count)]
            message += part
        }
        return "pdl_" + RequestKey(bytes: mac(linkSecret, message)).hex
    }

    /// The document's grants and links (empty when it has none).
    func access(of id: DocumentID) -> DocumentAccess { access[id] ?? DocumentAccess() }

    /// The role `user` has for the document, before any link: nil when it may not see it.
    func role(of record: DocumentRecord, user: String, workspaceRole: Role) -> Role? {
        if workspaceRole == .owner { return .owner }
        if access[record.id]?.unreadable == true { return nil }
        if let grant = access[record.id]?.grant(for: user) { return grant.role.role }
        if Identifier.equal(record.createdBy, user) { return .owner }
        return workspaceRole
    }

    /// The role a scene has for the document: the user's, raised by a link it opened it through
    /// while that link stands at `now`.
    func role(of record: DocumentRecord, scene: SceneID, user: String, workspaceRole: Role, now: Millis) -> Role? {
        role(of: record, user: user, workspaceRole: workspaceRole, link: linkUses[scene]?[record.id], now: now)
    }

    /// The user's role raised by the link `linkID` while it stands at `now`.
    func role(of record: DocumentRecord, user: String, workspaceRole: Role, link linkID: String?, now: Millis) -> Role? {
        let base = role(of: record, user: user, workspaceRole: workspaceRole)
        guard let linkID, let link = access[record.id]?.links.first(where: { $0.id == linkID }), link.isValid(at: now)
        else { return base }
        return max(base ?? link.role, link.role)
    }

    /// The link (by id) the scene opened the document through, if any.
    func link(usedBy scene: SceneID, for id: DocumentID) -> String? { linkUses[scene]?[id] }

    /// The link whose token has this hash, with its document.
    func link(tokenHash: String) -> (document: DocumentID, link: DocumentLink)? {
        guard let id = documentsByToken[tokenHash],
              let link = access[id]?.links.first(where: { $0.tokenHash == tokenHash }) else { return nil }
        return (id, link)
    }

    // MARK: Changes

    /// Replaces the document's access (a change made here, or read from the store).
    mutating func set(_ id: DocumentID, _ new: DocumentAccess) {
        epoch &+= 1
        for link in access[id]?.links ?? [] { documentsByToken[link.tokenHash] = nil }
        access[id] = new.isEmpty && new.version == 0 ? nil : new
        for link in new.links { documentsByToken[link.tokenHash] = id }
    }

    /// Takes a copy another node wrote, unless this node's own is newer. Returns whether it did.
    mutating func take(_ id: DocumentID, _ new: DocumentAccess) -> Bool {
        guard new.version >= (access[id]?.version ?? 0), new != access[id] else { return false }
        set(id, new)
        return true
    }

    /// A scene's workspace role changed (a refreshed token).
    mutating func workspaceRoleChanged() { epoch &+= 1 }

    /// Forgets a deleted document's access.
    mutating func remove(_ id: DocumentID) {
        set(id, DocumentAccess())
        access[id] = nil
    }

    // MARK: Scenes

    /// The scene opened the document through this link: it keeps the link's role while the link stands.
    mutating func use(_ link: DocumentLink, of id: DocumentID, by scene: SceneID) {
        linkUses[scene, default: [:]][id] = link.id
        expiries.push(id, at: link.expiresAt)
    }

    /// The role the scene was last told for the document (when it opened it, or since).
    func toldRole(_ scene: SceneID, _ id: DocumentID) -> Role? { told[scene]?[id] }

    mutating func tell(_ scene: SceneID, _ id: DocumentID, _ role: Role) {
        told[scene, default: [:]][id] = role
    }

    /// The scene closed the document (or lost it): its link use and told role go.
    mutating func closed(_ id: DocumentID, by scene: SceneID) {
        told[scene]?[id] = nil
        if told[scene]?.isEmpty == true { told[scene] = nil }
        linkUses[scene]?[id] = nil
        if linkUses[scene]?.isEmpty == true { linkUses[scene] = nil }
    }

    /// The scene ended.
    mutating func sceneEnded(_ scene: SceneID) {
        told[scene] = nil
        linkUses[scene] = nil
    }

    /// Documents with a link in use that expired by `now`.
    mutating func expired(now: Millis) -> [DocumentID] {
        Array(Set(expiries.popDue(now: now).map(\.key))).sorted()
    }
}
